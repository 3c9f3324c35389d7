import Foundation
import Testing
@testable import Courier
#if canImport(Glibc)
import Glibc
#endif

/// Uploads over sftp from memory, a file and a stream, with progress; continuing an interrupted
/// upload (``URLRequest/sftpResumesUpload``); and the errors.
extension SFTPTests {
    @Suite("SFTP uploads")
    struct UploadTests {
        private func request(_ url: URL, resumes: Bool = false) -> URLRequest {
            var request = URLRequest(url: url)
            request.httpMethod = "PUT"
            request.sftpResumesUpload = resumes
            return request
        }

        private func sentTotals(_ delegate: EventDelegate, _ task: URLSessionTask) -> [(total: Int64, expected: Int64)] {
            delegate.events(for: task).compactMap { event in
                if case .sentBody(_, let total, let expected) = event { return (total, expected) }
                return nil
            }
        }

        @Test func uploadData() async throws {
            let server = try await SFTPTest.server()
            let body = try SFTPTest.randomBytes(3 << 20)
            let name = SFTPTest.uploadName("data")
            let delegate = EventDelegate()
            let session = SFTPTest.session(server, delegate: delegate)
            defer { session.finishTasksAndInvalidate() }
            let task = session.uploadTask(with: request(server.url(name, password: true)), from: body)
            try await SFTPTest.run(task, delegate, timeout: 30)
            #expect(delegate.error(of: task) == nil)
            #expect((try server.contents(of: name)) == body)
            let totals = sentTotals(delegate, task)
            #expect(totals.last?.total == Int64(body.count))
            #expect(totals.allSatisfy { $0.expected == Int64(body.count) })
            #expect(zip(totals, totals.dropFirst()).allSatisfy { $0.total < $1.total })
            let response = try #require(delegate.response(of: task))
            #expect(response.expectedContentLength == 0)
            #expect(delegate.body(of: task).isEmpty)
        }

        @Test func uploadFileWithCompletionHandler() async throws {
            let server = try await SFTPTest.server()
            let body = try SFTPTest.randomBytes(5 << 20 + 123)
            let source = server.prefix.appendingPathComponent("upload-source-\(UUID().uuidString).bin")
            try body.write(to: source)
            defer { try? FileManager.default.removeItem(at: source) }
            let name = SFTPTest.uploadName("file")
            let session = SFTPTest.session(server)
            defer { session.finishTasksAndInvalidate() }
            let shot = OneShot<DataResult>()
            let task = session.uploadTask(with: request(server.url(name, password: true)), fromFile: source) { data, response, error in
                shot.fulfil(DataResult(data: data, response: response, error: error))
            }
            task.resume()
            let result = try await shot.wait(timeout: 30)
            #expect(result.error == nil)
            #expect(result.response != nil)
            #expect(StreamHash.of(try server.contents(of: name)) == StreamHash.of(body))
        }

        @Test func uploadStream() async throws {
            let server = try await SFTPTest.server()
            let body = try SFTPTest.randomBytes(2 << 20)
            let name = SFTPTest.uploadName("stream")
            let delegate = EventDelegate(EventDelegate.Hooks(bodyStream: { _ in InputStream(data: body) }))
            let session = SFTPTest.session(server, delegate: delegate)
            defer { session.finishTasksAndInvalidate() }
            let task = session.uploadTask(withStreamedRequest: request(server.url(name, password: true)))
            try await SFTPTest.run(task, delegate, timeout: 30)
            #expect(delegate.error(of: task) == nil)
            #expect((try server.contents(of: name)) == body)
            #expect(sentTotals(delegate, task).last?.total == Int64(body.count))
            #expect(sentTotals(delegate, task).last?.expected == NSURLSessionTransferSizeUnknown)
        }

        @Test func asyncUploadReplacesAnExistingFile() async throws {
            let server = try await SFTPTest.server()
            let name = SFTPTest.uploadName("replace")
            let session = SFTPTest.session(server)
            defer { session.finishTasksAndInvalidate() }
            let url = server.url(name, password: true)
            _ = try await withTimeout(20, "first upload") { try await session.upload(for: request(url), from: Data(repeating: 1, count: 5000)) }
            _ = try await withTimeout(20, "second upload") { try await session.upload(for: request(url), from: Data("short".utf8)) }
            #expect((try server.contents(of: name)) == Data("short".utf8))
        }

        @Test func resumingAnInterruptedUpload() async throws {
            let server = try await SFTPTest.server()
            let body = try SFTPTest.randomBytes(3 << 20)
            let name = SFTPTest.uploadName("resume")
            let partial = 1 << 20 + 77
            let target = server.files.appendingPathComponent(name)
            try body.prefix(partial).write(to: target)
            let account = try #require(getpwnam(SSHServer.user))
            chown(target.path, account.pointee.pw_uid, account.pointee.pw_gid)

            let delegate = EventDelegate()
            let session = SFTPTest.session(server, delegate: delegate)
            defer { session.finishTasksAndInvalidate() }
            let task = session.uploadTask(with: request(server.url(name, password: true), resumes: true), from: body)
            try await SFTPTest.run(task, delegate, timeout: 30)
            #expect(delegate.error(of: task) == nil)
            #expect((try server.contents(of: name)) == body)
            let totals = sentTotals(delegate, task)
            #expect(totals.first?.total == Int64(partial), "the bytes already there count as sent first")
            #expect(totals.last?.total == Int64(body.count))
            let sent = try #require(delegate.metrics(of: task)?.transactionMetrics.last)
            #expect(sent.countOfRequestBodyBytesSent == Int64(body.count - partial))
        }

        @Test func anUploadCutMidTransferContinuesWhereItStopped() async throws {
            let server = try await SFTPTest.server()
            let body = try SFTPTest.randomBytes(8 << 20)
            let name = SFTPTest.uploadName("cut")
            let proxy = try TCPTestServer(.proxy(port: server.port, cutAfter: 3 << 20, direction: .toServer))
            defer { proxy.stop() }
            let knownHosts = server.prefix.appendingPathComponent("known_hosts_proxy_\(proxy.port)")
            try Data(SSHServer.knownHostsLine(port: proxy.port, key: server.hostKey).utf8).write(to: knownHosts)
            let cutSession = SFTPTest.session(server) { $0.sshKnownHostsURL = knownHosts }
            defer { cutSession.finishTasksAndInvalidate() }
            let cutURL = server.url(name, password: true, port: proxy.port)
            let error = await #expect(throws: URLError.self) {
                try await withTimeout(30, "cut upload") { try await cutSession.upload(for: request(cutURL), from: body) }
            }
            #expect(error?.code == .networkConnectionLost)
            #expect(proxy.cuts == 1)
            // sshd writes what arrived before the cut: wait until the file stops growing.
            var size = -1
            for _ in 0..<50 {
                await settle(0.2)
                let now = (try? server.contents(of: name))?.count ?? 0
                if now > 0 && now == size { break }
                size = now
            }
            let partial = try server.contents(of: name)
            #expect(partial.count > 0 && partial.count < body.count)
            #expect(partial == body.prefix(partial.count))

            let delegate = EventDelegate()
            let session = SFTPTest.session(server, delegate: delegate)
            defer { session.finishTasksAndInvalidate() }
            let task = session.uploadTask(with: request(server.url(name, password: true), resumes: true), from: body)
            try await SFTPTest.run(task, delegate, timeout: 30)
            #expect(delegate.error(of: task) == nil)
            #expect((try server.contents(of: name)) == body)
            #expect(sentTotals(delegate, task).first?.total == Int64(partial.count))
        }

        @Test func resumingWhenTheRemoteFileIsLongerStartsOver() async throws {
            let server = try await SFTPTest.server()
            let body = try SFTPTest.randomBytes(100_000)
            let name = SFTPTest.uploadName("resume-longer")
            let target = server.files.appendingPathComponent(name)
            try Data(repeating: 9, count: 200_000).write(to: target)
            let account = try #require(getpwnam(SSHServer.user))
            chown(target.path, account.pointee.pw_uid, account.pointee.pw_gid)
            let session = SFTPTest.session(server)
            defer { session.finishTasksAndInvalidate() }
            let url = server.url(name, password: true)
            _ = try await withTimeout(20, "upload") { try await session.upload(for: request(url, resumes: true), from: body) }
            #expect((try server.contents(of: name)) == body)
        }

        @Test func uploadWithoutPermissionFails() async throws {
            let server = try await SFTPTest.server()
            let session = SFTPTest.session(server)
            defer { session.finishTasksAndInvalidate() }
            let url = server.url("\(SSHServer.Files.readOnly)/nope.bin", password: true)
            let error = await #expect(throws: URLError.self) {
                try await withTimeout(20, "upload") { try await session.upload(for: request(url), from: Data("x".utf8)) }
            }
            #expect(error?.code == .noPermissionsToReadFile)
        }

        @Test func uploadIntoAMissingDirectoryFails() async throws {
            let server = try await SFTPTest.server()
            let session = SFTPTest.session(server)
            defer { session.finishTasksAndInvalidate() }
            let url = server.url("no-such-directory/file.bin", password: true)
            let error = await #expect(throws: URLError.self) {
                try await withTimeout(20, "upload") { try await session.upload(for: request(url), from: Data("x".utf8)) }
            }
            #expect(error?.code == .fileDoesNotExist)
        }

        @Test func uploadToADirectoryURLFails() async throws {
            let server = try await SFTPTest.server()
            let session = SFTPTest.session(server)
            defer { session.finishTasksAndInvalidate() }
            let url = server.url("\(SSHServer.Files.uploads)/", password: true)
            let error = await #expect(throws: URLError.self) {
                try await withTimeout(20, "upload") { try await session.upload(for: request(url), from: Data("x".utf8)) }
            }
            #expect(error?.code == .fileIsDirectory)
        }
    }
}
