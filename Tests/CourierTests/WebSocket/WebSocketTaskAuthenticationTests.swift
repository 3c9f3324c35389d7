import Foundation
import Testing
@testable import Courier

/// Answers a WebSocket task's authentication challenges from a script and records them.
final class WebSocketChallengeAnswerer: NSObject, URLSessionWebSocketDelegate, @unchecked Sendable {
    typealias Answer = (URLSession.AuthChallengeDisposition, URLCredential?)

    /// What was seen of each challenge, in order.
    struct Seen: Sendable {
        var method: String
        var isProxy: Bool
        var realm: String?
        var previousFailureCount: Int
        var failureStatus: Int?
    }

    private let answers: Locked<[Answer]>
    let seen = Locked<[Seen]>([])
    let completed = Locked<[(any Error)?]>([])

    /// Answers the challenges with `answers` in order; later challenges are cancelled.
    init(_ answers: [Answer]) {
        self.answers = Locked(answers)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        let space = challenge.protectionSpace
        seen.withLock {
            $0.append(Seen(method: space.authenticationMethod, isProxy: space.isProxy(), realm: space.realm,
                           previousFailureCount: challenge.previousFailureCount,
                           failureStatus: (challenge.failureResponse as? HTTPURLResponse)?.statusCode))
        }
        let answer = answers.withLock { $0.isEmpty ? (.cancelAuthenticationChallenge, nil) : $0.removeFirst() }
        completionHandler(answer.0, answer.1)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        completed.withLock { $0.append(error) }
    }

    /// Waits (bounded) for the completion and returns its error.
    func completion() async throws -> (any Error)? {
        guard await waitUntil({ !self.completed.current.isEmpty }) else { throw TestTimeout(what: "the task's completion") }
        return completed.current[0]
    }
}

/// A WebSocket handshake's 401 and a proxy's 407 go to the task delegate, as a data task's do.
@Suite("WebSocket task authentication", .serialized)
struct WebSocketTaskAuthenticationTests {
    private static let good = URLCredential(user: "user", password: "secret", persistence: .none)

    /// Opens `path` with `answerer` and returns the echo of one message, or the task's error.
    private func echo(_ path: String, answerer: WebSocketChallengeAnswerer,
                      configure: (URLSessionConfiguration) -> Void = { _ in }) async throws -> (String?, URLSessionWebSocketTask) {
        let server = try await WebSocketTestServer.shared()
        let session = WebSocketTest.session(delegate: answerer, server: server, configure: configure)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: server.url(path))
        task.resume()
        do {
            try await WebSocketTest.send(.string("authorized"), on: task)
            return (WebSocketTest.text(try await WebSocketTest.receive(task)), task)
        } catch {
            _ = try await answerer.completion()
            return (nil, task)
        }
    }

    @Test func aBasicChallengeGoesToTheTaskDelegate() async throws {
        let answerer = WebSocketChallengeAnswerer([(.useCredential, Self.good)])
        let (echoed, _) = try await echo("/auth", answerer: answerer)
        let seen = answerer.seen.current
        #expect(echoed == "authorized" && seen.count == 1 && seen[0].method == NSURLAuthenticationMethodHTTPBasic
                && seen[0].realm == "ws" && seen[0].previousFailureCount == 0 && seen[0].failureStatus == 401 && !seen[0].isProxy)
    }

    @Test(arguments: ["MD5", "SHA-256"])
    func aDigestChallengeIsAnswered(algorithm: String) async throws {
        let answerer = WebSocketChallengeAnswerer([(.useCredential, Self.good)])
        let (echoed, _) = try await echo("/digest?algorithm=\(algorithm)", answerer: answerer)
        let seen = answerer.seen.current
        #expect(echoed == "authorized" && seen.map(\.method) == [NSURLAuthenticationMethodHTTPDigest] && seen[0].realm == "ws-digest")
    }

    @Test func aRefusedCredentialIsChallengedAgainWithTheFailureCount() async throws {
        let wrong = URLCredential(user: "user", password: "wrong", persistence: .none)
        let answerer = WebSocketChallengeAnswerer([(.useCredential, wrong), (.useCredential, Self.good)])
        let (echoed, _) = try await echo("/auth", answerer: answerer)
        #expect(echoed == "authorized" && answerer.seen.current.map(\.previousFailureCount) == [0, 1])
    }

    @Test func rejectingTheOnlyProtectionSpaceEndsTheTaskWithThe401() async throws {
        let answerer = WebSocketChallengeAnswerer([(.rejectProtectionSpace, nil)])
        let (_, task) = try await echo("/auth", answerer: answerer)
        let error = answerer.completed.current.first ?? nil
        #expect((error as? URLError)?.code == .badServerResponse && (task.response as? HTTPURLResponse)?.statusCode == 401)
    }

    @Test func cancellingTheChallengeCancelsTheTask() async throws {
        let answerer = WebSocketChallengeAnswerer([(.cancelAuthenticationChallenge, nil)])
        _ = try await echo("/auth", answerer: answerer)
        #expect(((answerer.completed.current.first ?? nil) as? URLError)?.code == .cancelled)
    }

    @Test func defaultHandlingWithNoStoredCredentialEndsWithThe401() async throws {
        let answerer = WebSocketChallengeAnswerer([(.performDefaultHandling, nil)])
        let (_, task) = try await echo("/auth", answerer: answerer)
        let error = answerer.completed.current.first ?? nil
        #expect((error as? URLError)?.code == .badServerResponse && (task.response as? HTTPURLResponse)?.statusCode == 401)
    }

    @Test func defaultHandlingUsesTheStoredDefaultCredential() async throws {
        let server = try await WebSocketTestServer.shared()
        let answerer = WebSocketChallengeAnswerer([(.performDefaultHandling, nil)])
        let space = URLProtectionSpace(host: "127.0.0.1", port: server.wsPort, protocol: "http", realm: "ws-digest",
                                       authenticationMethod: NSURLAuthenticationMethodHTTPDigest)
        let storage = URLCredentialStorage()
        storage.setDefaultCredential(URLCredential(user: "user", password: "secret", persistence: .forSession), for: space)
        let (echoed, _) = try await echo("/digest", answerer: answerer) { $0.urlCredentialStorage = storage }
        #expect(echoed == "authorized")
    }

    @Test func aCredentialWithPersistenceIsStoredOnceAccepted() async throws {
        let server = try await WebSocketTestServer.shared()
        let answerer = WebSocketChallengeAnswerer([(.useCredential, URLCredential(user: "user", password: "secret", persistence: .forSession))])
        let storage = URLCredentialStorage()
        let (echoed, _) = try await echo("/auth", answerer: answerer) { $0.urlCredentialStorage = storage }
        let space = URLProtectionSpace(host: "127.0.0.1", port: server.wsPort, protocol: "http", realm: "ws",
                                       authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
        #expect(echoed == "authorized" && storage.defaultCredential(for: space)?.password == "secret")
    }

    private static func proxied(_ proxy: ForwardProxy) -> (URLSessionConfiguration) -> Void {
        { $0.connectionProxyDictionary = ["HTTPEnable": 1, "HTTPProxy": "127.0.0.1", "HTTPPort": proxy.port] }
    }

    @Test func aProxys407GoesToTheTaskDelegate() async throws {
        let proxy = try ForwardProxy(.http, credentials: ("proxy-user", "proxy pass"))
        defer { proxy.stop() }
        let answerer = WebSocketChallengeAnswerer([(.useCredential, URLCredential(user: "proxy-user", password: "proxy pass",
                                                                                   persistence: .none))])
        let (echoed, _) = try await echo("/echo", answerer: answerer, configure: Self.proxied(proxy))
        let seen = answerer.seen.current
        #expect(echoed == "authorized" && seen.count == 1 && seen[0].isProxy && seen[0].method == NSURLAuthenticationMethodHTTPBasic
                && proxy.requests.contains { $0.method == "CONNECT" && $0.header("Proxy-Authorization") != nil })
    }

    @Test func aRefusedProxyChallengeEndsTheTaskWithThe407() async throws {
        let proxy = try ForwardProxy(.http, credentials: ("proxy-user", "proxy pass"))
        defer { proxy.stop() }
        let answerer = WebSocketChallengeAnswerer([(.rejectProtectionSpace, nil)])
        let (_, task) = try await echo("/echo", answerer: answerer, configure: Self.proxied(proxy))
        let error = answerer.completed.current.first ?? nil
        #expect((error as? URLError)?.code == .badServerResponse && (task.response as? HTTPURLResponse)?.statusCode == 407)
    }
}

/// `Authorization: Digest` as Courier writes it, against RFC 7616's example (section 3.9.1).
@Suite("WebSocket Digest authorization")
struct WebSocketDigestAuthorizationTests {
    private static let challenge = "Digest realm=\"http-auth@example.org\", qop=\"auth, auth-int\", algorithm=%@, "
        + "nonce=\"7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v\", opaque=\"FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS\""

    @Test(arguments: [("MD5", "8ca523f5e9506fed4657c9700eebdbec"),
                      ("SHA-256", "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1")])
    func matchesTheRFCExample(algorithm: String, response: String) {
        let value = WebSocketDigestAuthorization.value(challenge: String(format: Self.challenge, algorithm), user: "Mufasa",
                                                       password: "Circle of Life", method: "GET", uri: "/dir/index.html",
                                                       clientNonce: "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ")
        #expect(value?.contains("response=\"\(response)\"") == true)
    }

    @Test func findsTheDigestChallengeAmongOthers() {
        let parameters = WebSocketDigestAuthorization.digestParameters(in: "Basic realm=\"a\", Digest realm=\"b\", nonce=n1, qop=\"auth\"")
        #expect(parameters == ["realm": "b", "nonce": "n1", "qop": "auth"])
    }

    @Test func anUnknownAlgorithmIsNotAnswered() {
        #expect(WebSocketDigestAuthorization.value(challenge: "Digest realm=\"r\", nonce=\"n\", algorithm=SHA-512-256",
                                                   user: "u", password: "p", method: "GET", uri: "/") == nil)
    }
}
