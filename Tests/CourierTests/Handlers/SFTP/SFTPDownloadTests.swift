import Foundation
import Testing
@testable import Courier

/// Downloads over sftp: every task API, the response, and the errors for missing, unreadable and
/// directory paths.
extension SFTPTests {
    @Suite("SFTP downloads")
    struct DownloadTests {
        @Test func dataTaskWithPasswordInURL() async throws {
            let server = try await SFTPTest.server()
            let session = SFTPTest.session(server)
            defer { session.finishTasksAndInvalidate() }
            let url = server.url(SSHServer.Files.hello, password: true)
            let result = try await session.loadData(url)
            #expect(result.error == nil)
            #expect(result.data == SSHServer.Files.helloContents)
            let response = try #require(result.response)
            #expect(!(response is HTTPURLResponse))
            #expect(response.url == url)
            #expect(response.expectedContentLength == Int64(SSHServer.Files.helloContents.count))
            #expect(response.mimeType == "text/plain")
        }

        @Test func delegateDataTaskStreamsABigFile() async throws {
            let server = try await SFTPTest.server()
            let delegate = EventDelegate()
            let session = SFTPTest.session(server, delegate: delegate)
            defer { session.finishTasksAndInvalidate() }
            let task = session.dataTask(with: server.url(SSHServer.Files.big, password: true))
            try await SFTPTest.run(task, delegate, timeout: 60)
            #expect(delegate.error(of: task) == nil)
            let body = delegate.body(of: task)
            #expect(body.count == SSHServer.Files.bigSize)
            #expect(StreamHash.of(body) == server.bigHash)
            #expect(delegate.response(of: task)?.mimeType == "application/octet-stream")
            #expect(delegate.collapsedNames(for: task) == ["response", "data", "metrics", "complete"])
            let transaction = try #require(delegate.metrics(of: task)?.transactionMetrics.first)
            #expect(transaction.networkProtocolName == "sftp")
            #expect(transaction.remoteAddress == "127.0.0.1")
            #expect(transaction.remotePort == String(server.port))
        }

        @Test func downloadTaskWritesTheFile() async throws {
            let server = try await SFTPTest.server()
            let delegate = EventDelegate()
            let session = SFTPTest.session(server, delegate: delegate)
            defer { session.finishTasksAndInvalidate() }
            let task = session.downloadTask(with: server.url(SSHServer.Files.medium, password: true))
            try await SFTPTest.run(task, delegate, timeout: 30)
            #expect(delegate.error(of: task) == nil)
            #expect(delegate.download(of: task)?.content == (try server.contents(of: SSHServer.Files.medium)))
            let wrote = delegate.events(for: task).compactMap { event -> Int64? in
                if case .wrote(_, _, let total, let expected) = event, expected == Int64(SSHServer.Files.mediumSize) { return total }
                return nil
            }
            #expect(wrote.last == Int64(SSHServer.Files.mediumSize))
        }

        @Test func asyncDataDownloadAndBytes() async throws {
            let server = try await SFTPTest.server()
            let session = SFTPTest.session(server)
            defer { session.finishTasksAndInvalidate() }
            let url = server.url(SSHServer.Files.lines, password: true)
            let (data, response) = try await withTimeout(20, "data(from:)") { try await session.data(from: url) }
            #expect(data == (try server.contents(of: SSHServer.Files.lines)))
            #expect(response.expectedContentLength == Int64(data.count))

            let (location, _) = try await withTimeout(20, "download(from:)") { try await session.download(from: url) }
            #expect((try Data(contentsOf: location)) == data)
            try? FileManager.default.removeItem(at: location)

            let lines = try await withTimeout(20, "bytes(from:)") {
                let (bytes, _) = try await session.bytes(from: url)
                var collected: [String] = []
                for try await line in bytes.lines { collected.append(line) }
                return collected
            }
            #expect(lines.count == SSHServer.Files.lineCount)
            #expect(lines.first == "line 1")
            #expect(lines.last == "line \(SSHServer.Files.lineCount)")
        }

        @Test func homeRelativePath() async throws {
            let server = try await SFTPTest.server()
            let session = SFTPTest.session(server)
            defer { session.finishTasksAndInvalidate() }
            // /~/ is the user's home directory (/var/lib/courier-sftp); list it.
            let url = URL(string: "sftp://\(SSHServer.user):\(server.password)@127.0.0.1:\(server.port)/~/")!
            let result = try await session.loadData(url)
            #expect(result.error == nil)
            #expect(result.response?.mimeType == URLDirectoryListing.mimeType)
        }

        @Test func missingFileFails() async throws {
            let server = try await SFTPTest.server()
            let session = SFTPTest.session(server)
            defer { session.finishTasksAndInvalidate() }
            let url = server.url("no-such-file.txt", password: true)
            let result = try await session.loadData(url)
            let error = try SFTPTest.urlError(result.error)
            #expect(error.code == .fileDoesNotExist)
            #expect(error.failingURL?.absoluteString == url.absoluteString)
            #expect(result.response == nil)
        }

        @Test func unreadableFileFails() async throws {
            let server = try await SFTPTest.server()
            let session = SFTPTest.session(server)
            defer { session.finishTasksAndInvalidate() }
            let result = try await session.loadData(server.url(SSHServer.Files.secret, password: true))
            #expect(try SFTPTest.urlError(result.error).code == .noPermissionsToReadFile)
        }

        @Test func directoryWithoutSlashFails() async throws {
            let server = try await SFTPTest.server()
            let session = SFTPTest.session(server)
            defer { session.finishTasksAndInvalidate() }
            let result = try await session.loadData(server.url(SSHServer.Files.directory, password: true))
            #expect(try SFTPTest.urlError(result.error).code == .fileIsDirectory)
        }

        @Test func suspendedTaskPausesAndContinues() async throws {
            let server = try await SFTPTest.server()
            let delegate = EventDelegate()
            let session = SFTPTest.session(server, delegate: delegate)
            defer { session.finishTasksAndInvalidate() }
            let task = session.dataTask(with: server.url(SSHServer.Files.big, password: true))
            task.resume()
            #expect(await delegate.waitForEvent { $0.name == "data" })
            task.suspend()
            await settle(0.5)
            let paused = delegate.body(of: task).count
            await settle(0.5)
            // Data already queued may still arrive, but the transfer does not run on.
            #expect(delegate.body(of: task).count - paused < 4 << 20)
            #expect(delegate.body(of: task).count < SSHServer.Files.bigSize)
            task.resume()
            #expect(await delegate.waitForCompletion(of: task, timeout: 60))
            #expect(delegate.error(of: task) == nil)
            #expect(StreamHash.of(delegate.body(of: task)) == server.bigHash)
        }
    }
}
