import Foundation
import Testing
@testable import Courier

/// FTPS (explicit AUTH TLS and implicit ftps:) with the server-trust challenge, and resumable
/// downloads that continue with REST or start over when the file changed.
@Suite("FTPS and FTP resume", .serialized)
struct FTPSecurityAndResumeTests {
    @Test func explicitTLSNeedsTheServerTrusted() async throws {
        let server = try await FTPTest.servers()
        var request = URLRequest(url: server.url("/hello.txt", server: .tls, user: FTPTestServer.user, password: FTPTestServer.password))
        request.ftpRequiresTLS = true

        let untrusting = FTPTest.session()
        defer { untrusting.finishTasksAndInvalidate() }
        let refused = try await untrusting.loadData(request, timeout: 30)
        let error = try FTPTest.urlError(refused.error)
        // The test server's certificate is self-signed: untrusted, as Apple reports one.
        #expect(error.code == .serverCertificateUntrusted, "\(error)")

        let methods = Locked<[String]>([])
        let delegate = EventDelegate(EventDelegate.Hooks(challenge: { task, challenge, completion in
            methods.withLock { $0.append(challenge.protectionSpace.authenticationMethod) }
            FTPTest.accepting()(task, challenge, completion)
        }))
        let trusting = FTPTest.session(delegate: delegate)
        defer { trusting.finishTasksAndInvalidate() }
        let task = trusting.dataTask(with: request)
        task.resume()
        #expect(await delegate.waitForCompletion(of: task, timeout: 30))
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == Data("Hello, Courier!\n".utf8))
        #expect(methods.current == [NSURLAuthenticationMethodServerTrust])
    }

    @Test func plainLoginIsRefusedWhereTLSIsRequired() async throws {
        let server = try await FTPTest.servers()
        let session = FTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let result = try await session.loadData(server.url("/hello.txt", server: .tls, user: FTPTestServer.user,
                                                           password: FTPTestServer.password), timeout: 30)
        #expect(result.error != nil, "the tls server refuses a login without AUTH TLS")
    }

    @Test func implicitTLS() async throws {
        let server = try await FTPTest.servers()
        let delegate = EventDelegate(EventDelegate.Hooks(challenge: FTPTest.accepting()))
        let session = FTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let url = server.ftpsURL("/hello.txt", user: FTPTestServer.user, password: FTPTestServer.password)
        let task = session.dataTask(with: url)
        task.resume()
        #expect(await delegate.waitForCompletion(of: task, timeout: 30))
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == Data("Hello, Courier!\n".utf8))
        let transaction = try #require(delegate.metrics(of: task)?.transactionMetrics.last)
        #expect(transaction.negotiatedTLSProtocolVersion != nil, "the implicit-TLS connection's version is reported")
        #expect(transaction.networkProtocolName == "ftps")
    }

    // MARK: Resume

    /// A delegate that cancels its download with resume data once `threshold` bytes are written.
    private func cancellingDelegate(after threshold: Int64, resumeData: OneShot<Data?>) -> EventDelegate {
        let cancelled = Locked(false)
        return EventDelegate(EventDelegate.Hooks(wrote: { task, _, total, _ in
            guard total >= threshold, !cancelled.withLock({ let was = $0; $0 = true; return was }) else { return }
            task.cancel(byProducingResumeData: { data in resumeData.fulfil(data) })
        }))
    }

    /// Writes a fresh file of `size` random bytes under the server root and returns its contents.
    private func freshFile(_ server: FTPTestServer, _ name: String, size: Int) throws -> Data {
        var generator = SystemRandomNumberGenerator()
        let body = Data((0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try body.write(to: server.root.appendingPathComponent(name))
        return body
    }

    private func resumedEvents(_ delegate: EventDelegate, _ task: URLSessionTask) -> [(Int64, Int64)] {
        delegate.events(for: task).compactMap { event -> (Int64, Int64)? in
            if case .resumed(_, let offset, let expected) = event { return (offset, expected) }
            return nil
        }
    }

    @Test func resumeContinuesWithREST() async throws {
        let server = try await FTPTest.servers()
        let name = "resume-\(UUID().uuidString).bin"
        let body = try freshFile(server, name, size: 24 << 20)
        defer { try? FileManager.default.removeItem(at: server.root.appendingPathComponent(name)) }
        let resumeData = OneShot<Data?>()
        let delegate = cancellingDelegate(after: 1 << 20, resumeData: resumeData)
        let session = FTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }

        let first = session.downloadTask(with: server.url("/\(name)"))
        first.resume()
        #expect(await delegate.waitForCompletion(of: first, timeout: 30))
        let data = try #require(try await resumeData.wait(timeout: 10), "no resume data; \(String(describing: delegate.error(of: first)))")

        let second = session.downloadTask(withResumeData: data)
        second.resume()
        #expect(await delegate.waitForCompletion(of: second, timeout: 60))
        #expect(delegate.error(of: second) == nil)
        let resumed = resumedEvents(delegate, second)
        #expect(resumed.count == 1)
        #expect((resumed.first?.0 ?? 0) > 0, "continued past byte zero")
        #expect(resumed.first?.1 == Int64(body.count))
        #expect(delegate.download(of: second)?.content == body)
    }

    @Test func changedFileRestartsFromZero() async throws {
        let server = try await FTPTest.servers()
        let name = "changing-\(UUID().uuidString).bin"
        _ = try freshFile(server, name, size: 24 << 20)
        defer { try? FileManager.default.removeItem(at: server.root.appendingPathComponent(name)) }
        let resumeData = OneShot<Data?>()
        let delegate = cancellingDelegate(after: 1 << 20, resumeData: resumeData)
        let session = FTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }

        let first = session.downloadTask(with: server.url("/\(name)"))
        first.resume()
        #expect(await delegate.waitForCompletion(of: first, timeout: 30))
        let data = try #require(try await resumeData.wait(timeout: 10))

        let changed = try freshFile(server, name, size: 3 << 20)
        let second = session.downloadTask(withResumeData: data)
        second.resume()
        #expect(await delegate.waitForCompletion(of: second, timeout: 60))
        #expect(delegate.error(of: second) == nil)
        #expect(resumedEvents(delegate, second).allSatisfy { $0.0 == 0 }, "the changed file is not spliced")
        #expect(delegate.download(of: second)?.content == changed)
    }
}
