import Foundation
import Testing
@testable import Courier

/// A data task's `.becomeStream` against `stream_tls_server.py`'s `upgrade` mode (``StreamTLSServer``):
/// an `http:` upgrade answered `101` becomes a stream task over the same connection, with the bytes
/// the server sent right after the head; https and responses that are no upgrade fail clearly; the
/// session goes on with new connections.
@Suite("Stream tasks from a data task's .becomeStream")
struct StreamBecomeStreamTests {
    /// Answers responses with `.becomeStream` (`.allow` once ``allowFromNowOn()`` was called),
    /// `answerDelay` seconds after it was asked, and records the stream task or the data task's end.
    final class UpgradeDelegate: NSObject, URLSessionDataDelegate, URLSessionStreamDelegate, @unchecked Sendable {
        private let state = Locked<(stream: URLSessionStreamTask?, dataError: (any Error)?, dataCompleted: Bool)>((nil, nil, false))
        private let allows = Locked(false)
        private let answerDelay: TimeInterval

        init(answerDelay: TimeInterval = 0) {
            self.answerDelay = answerDelay
        }

        /// Later responses are allowed as data.
        func allowFromNowOn() { allows.withLock { $0 = true } }

        var streamTask: URLSessionStreamTask? { state.current.stream }
        var dataError: (any Error)? { state.current.dataError }
        var dataCompleted: Bool { state.current.dataCompleted }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
            let disposition: URLSession.ResponseDisposition = allows.current ? .allow : .becomeStream
            guard answerDelay > 0 else {
                completionHandler(disposition)
                return
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + answerDelay) { completionHandler(disposition) }
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didBecome streamTask: URLSessionStreamTask) {
            state.withLock { $0.stream = streamTask }
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            guard task is URLSessionDataTask else { return }
            state.withLock {
                $0.dataCompleted = true
                $0.dataError = error
            }
        }
    }

    private static func upgradeRequest(port: Int, scheme: String = "http") throws -> URLRequest {
        var request = URLRequest(url: try #require(URL(string: "\(scheme)://127.0.0.1:\(port)/chat")))
        request.setValue("echo", forHTTPHeaderField: "Upgrade")
        request.setValue("Upgrade", forHTTPHeaderField: "Connection")
        return request
    }

    /// Starts `request` and waits (bounded) for its stream task or its end.
    private static func run(_ request: URLRequest, in session: URLSession, _ delegate: UpgradeDelegate) async -> Bool {
        session.dataTask(with: request).resume()
        return await waitUntil { delegate.streamTask != nil || delegate.dataCompleted }
    }

    @Test func anUpgradedConnectionBecomesAStreamTaskWithTheBytesSentAfterTheHead() async throws {
        let server = try await StreamTLSServer.shared(.upgrade)
        let delegate = UpgradeDelegate()
        let session = HTTPTest.session(delegate: delegate)
        defer { session.invalidateAndCancel() }
        #expect(await Self.run(try Self.upgradeRequest(port: server.port), in: session, delegate))
        let stream = try #require(delegate.streamTask)
        // "welcome\n" came in the same packet as the 101's head: libcurl read it, the stream gets it first.
        let welcome = try await StreamTest.read(stream, count: 8)
        try await stream.write(Data("line one\n".utf8), timeout: StreamTest.timeout)
        let echoed = try await StreamTest.read(stream, count: 9)
        #expect(welcome == Data("welcome\n".utf8) && echoed == Data("line one\n".utf8) && !delegate.dataCompleted)
    }

    @Test func theSessionGoesOnWithANewConnectionAfterTheHandOver() async throws {
        let server = try await StreamTLSServer.shared(.upgrade)
        let delegate = UpgradeDelegate()
        let session = HTTPTest.session(delegate: delegate)
        defer { session.invalidateAndCancel() }
        #expect(await Self.run(try Self.upgradeRequest(port: server.port), in: session, delegate))
        let stream = try #require(delegate.streamTask)
        _ = try await StreamTest.read(stream, count: 8)
        // Had libcurl kept the handed-over connection, this GET would go down the echoing stream and
        // come back as no HTTP response at all.
        delegate.allowFromNowOn()
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/plain"))
        let (body, response) = try await session.data(from: url)
        try await stream.write(Data("still here\n".utf8), timeout: StreamTest.timeout)
        let echoed = try await StreamTest.read(stream, count: 11)
        #expect((response as? HTTPURLResponse)?.statusCode == 200 && body == Data("ok".utf8) && echoed == Data("still here\n".utf8))
    }

    @Test func anHTTPSDataTaskCannotBecomeAStreamTask() async throws {
        let server = try await NginxTLSServer.shared()
        let delegate = UpgradeDelegate()
        let session = HTTPTest.session(delegate: delegate) {
            $0.tlsTrustAnchors = TLSTrustAnchors(file: server.pki.rootCA.path, directory: nil)
        }
        defer { session.invalidateAndCancel() }
        #expect(await Self.run(URLRequest(url: server.url(server.chainPort)), in: session, delegate))
        let error = try StreamTest.urlError(delegate.dataError)
        #expect(error.code == .unsupportedURL && error.localizedDescription.contains("https") && delegate.streamTask == nil)
    }

    /// The refusal's reason does not depend on timing: here the delegate answers long after nginx's
    /// short response ended the load (which, in a loaded full run, could also happen by chance).
    @Test func anHTTPSDataTaskCannotBecomeAStreamTaskAfterItsLoadEnded() async throws {
        let server = try await NginxTLSServer.shared()
        let delegate = UpgradeDelegate(answerDelay: 0.5)
        let session = HTTPTest.session(delegate: delegate) {
            $0.tlsTrustAnchors = TLSTrustAnchors(file: server.pki.rootCA.path, directory: nil)
        }
        defer { session.invalidateAndCancel() }
        #expect(await Self.run(URLRequest(url: server.url(server.chainPort)), in: session, delegate))
        let error = try StreamTest.urlError(delegate.dataError)
        #expect(error.code == .unsupportedURL && error.localizedDescription.contains("https") && delegate.streamTask == nil)
    }

    @Test func aResponseThatIsNoUpgradeCannotBecomeAStreamTask() async throws {
        let server = try await StreamTLSServer.shared(.upgrade)
        let delegate = UpgradeDelegate()
        let session = HTTPTest.session(delegate: delegate)
        defer { session.invalidateAndCancel() }
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/plain"))
        #expect(await Self.run(URLRequest(url: url), in: session, delegate))
        let error = try StreamTest.urlError(delegate.dataError)
        #expect(error.code == .unsupportedURL && error.localizedDescription.contains("101") && delegate.streamTask == nil)
    }
}
