import Foundation
import Testing
@testable import Courier

/// NTLM in the WebSocket handshake, against `ntlm_server.py` (pyspnego verifies the NTLMv2
/// answer): the NEGOTIATE, CHALLENGE and AUTHENTICATE on one connection, then the 101.
@Suite("WebSocket NTLM", .serialized)
struct WebSocketNTLMTests {
    private static let user = URLCredential(user: "user", password: "secret", persistence: .none)

    /// Opens `path` (ws, or wss with `secure`) with `answerer`; the task after one echo round trip
    /// (`nil` echo when the task failed instead).
    private func open(_ path: String, secure: Bool = false, answerer: WebSocketChallengeAnswerer,
                      configure: @escaping (URLSessionConfiguration) -> Void = { _ in })
        async throws -> (echoed: String?, task: URLSessionWebSocketTask, session: URLSession) {
        let server = try await NTLMTestServer.shared()
        let session = WebSocketTest.session(delegate: answerer) { configuration in
            configuration.tlsTrustAnchors = TLSTrustAnchors(file: server.pki.rootCA.path)
            configure(configuration)
        }
        let task = session.webSocketTask(with: server.url(path, scheme: secure ? "wss" : "ws"))
        task.resume()
        do {
            try await WebSocketTest.send(.string("over ntlm"), on: task)
            return (WebSocketTest.text(try await WebSocketTest.receive(task)), task, session)
        } catch {
            _ = try await answerer.completion()
            return (nil, task, session)
        }
    }

    @Test func theHandshakeAuthenticatesAndTheConnectionEchoesAndClosesCleanly() async throws {
        let answerer = WebSocketChallengeAnswerer([(.useCredential, Self.user)])
        let (echoed, task, session) = try await open("/ws", answerer: answerer)
        defer { session.invalidateAndCancel() }
        try await WebSocketTest.send(.data(Data([0, 1, 2, 255])), on: task)
        let binary = WebSocketTest.data(try await WebSocketTest.receive(task))
        task.cancel(with: .normalClosure, reason: nil)
        _ = try await answerer.completion()
        let seen = answerer.seen.current
        #expect(echoed == "over ntlm" && binary == Data([0, 1, 2, 255]) && task.closeCode == .normalClosure
                && seen.count == 1 && seen[0].method == NSURLAuthenticationMethodNTLM && seen[0].previousFailureCount == 0
                && seen[0].failureStatus == 401 && (task.response as? HTTPURLResponse)?.statusCode == 101)
    }

    @Test func aWrongPasswordIsChallengedAgainAndRefusingEndsWithThe401() async throws {
        let wrong = URLCredential(user: "user", password: "wrong", persistence: .none)
        let answerer = WebSocketChallengeAnswerer([(.useCredential, wrong), (.performDefaultHandling, nil)])
        let (echoed, task, session) = try await open("/ws", answerer: answerer)
        defer { session.invalidateAndCancel() }
        let error = answerer.completed.current.first ?? nil
        let seen = answerer.seen.current
        #expect(echoed == nil && seen.map(\.previousFailureCount) == [0, 1] && seen.allSatisfy { $0.method == NSURLAuthenticationMethodNTLM }
                && (error as? URLError)?.code == .badServerResponse && (task.response as? HTTPURLResponse)?.statusCode == 401)
    }

    @Test func aRefusedCredentialCanBeReplacedByTheRightOne() async throws {
        let wrong = URLCredential(user: "user", password: "wrong", persistence: .none)
        let answerer = WebSocketChallengeAnswerer([(.useCredential, wrong), (.useCredential, Self.user)])
        let (echoed, _, session) = try await open("/ws", answerer: answerer)
        defer { session.invalidateAndCancel() }
        #expect(echoed == "over ntlm" && answerer.seen.current.map(\.previousFailureCount) == [0, 1])
    }

    /// A server that offers Negotiate before NTLM (as IIS does): without a Kerberos ticket the
    /// delegate passes over the Negotiate space and answers the NTLM one (Migration.md).
    @Test func aServerOfferingNegotiateThenNTLMIsAnsweredInItsNTLMSpace() async throws {
        let answerer = WebSocketChallengeAnswerer([(.rejectProtectionSpace, nil), (.useCredential, Self.user)])
        let (echoed, task, session) = try await open("/ws-both", answerer: answerer)
        defer { session.invalidateAndCancel() }
        let seen = answerer.seen.current
        #expect(echoed == "over ntlm" && seen.map(\.method) == [NSURLAuthenticationMethodNegotiate, NSURLAuthenticationMethodNTLM]
                && seen.map(\.previousFailureCount) == [0, 0] && (task.response as? HTTPURLResponse)?.statusCode == 101)
    }

    @Test func aChunkedChallengeBodyIsReadPast() async throws {
        let answerer = WebSocketChallengeAnswerer([(.useCredential, Self.user)])
        let (echoed, _, session) = try await open("/ws-chunked", answerer: answerer)
        defer { session.invalidateAndCancel() }
        #expect(echoed == "over ntlm")
    }

    @Test func aChallengeOnAClosingConnectionEndsTheTaskWithThe401() async throws {
        let answerer = WebSocketChallengeAnswerer([(.useCredential, Self.user)])
        let (echoed, task, session) = try await open("/ws-close", answerer: answerer)
        defer { session.invalidateAndCancel() }
        let error = (answerer.completed.current.first ?? nil) as? URLError
        #expect(echoed == nil && error?.code == .userAuthenticationRequired && error?.failingURL?.scheme == "ws"
                && (task.response as? HTTPURLResponse)?.statusCode == 401)
    }

    @Test func aChallengeThatIsNotAnNTLMMessageEndsTheTaskWithThe401() async throws {
        let answerer = WebSocketChallengeAnswerer([(.useCredential, Self.user)])
        let (echoed, task, session) = try await open("/ws-garbage", answerer: answerer)
        defer { session.invalidateAndCancel() }
        let error = (answerer.completed.current.first ?? nil) as? URLError
        #expect(echoed == nil && error?.code == .badServerResponse && (task.response as? HTTPURLResponse)?.statusCode == 401)
    }

    /// ws through the HTTP keys of the proxy dictionary, wss through the HTTPS ones (Apple's).
    @Test(arguments: [false, true])
    func theExchangeStaysOnOneConnectionThroughAProxyTunnel(secure: Bool) async throws {
        let proxy = try ForwardProxy(.http)
        defer { proxy.stop() }
        let answerer = WebSocketChallengeAnswerer([(.useCredential, Self.user)])
        let (echoed, _, session) = try await open("/ws", secure: secure, answerer: answerer) {
            $0.connectionProxyDictionary = ["HTTPEnable": 1, "HTTPProxy": "127.0.0.1", "HTTPPort": proxy.port,
                                            "HTTPSEnable": 1, "HTTPSProxy": "127.0.0.1", "HTTPSPort": proxy.port]
        }
        defer { session.invalidateAndCancel() }
        // The first connection got the 401 that started the challenge; the second carried NTLM.
        #expect(echoed == "over ntlm" && proxy.requests.filter { $0.method == "CONNECT" }.count == 2)
    }

    @Test func aDomainUserAuthenticates() async throws {
        let answerer = WebSocketChallengeAnswerer([(.useCredential, URLCredential(user: "EXAMPLE\\alice", password: "wonderland",
                                                                                   persistence: .none))])
        let (echoed, _, session) = try await open("/ws", answerer: answerer)
        defer { session.invalidateAndCancel() }
        #expect(echoed == "over ntlm")
    }

    @Test func wssAuthenticatesOverTLS() async throws {
        let answerer = WebSocketChallengeAnswerer([(.useCredential, Self.user)])
        let (echoed, _, session) = try await open("/ws", secure: true, answerer: answerer)
        defer { session.invalidateAndCancel() }
        #expect(echoed == "over ntlm")
    }

    @Test func defaultHandlingUsesTheStoredNTLMCredential() async throws {
        let server = try await NTLMTestServer.shared()
        let storage = URLCredentialStorage()
        let space = URLProtectionSpace(host: "127.0.0.1", port: server.httpPort, protocol: "http", realm: nil,
                                       authenticationMethod: NSURLAuthenticationMethodNTLM)
        storage.setDefaultCredential(URLCredential(user: "user", password: "secret", persistence: .forSession), for: space)
        let answerer = WebSocketChallengeAnswerer([(.performDefaultHandling, nil)])
        let session = WebSocketTest.session(delegate: answerer) { $0.urlCredentialStorage = storage }
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: server.url("/ws", scheme: "ws"))
        task.resume()
        try await WebSocketTest.send(.string("stored"), on: task)
        #expect(WebSocketTest.text(try await WebSocketTest.receive(task)) == "stored")
    }
}
