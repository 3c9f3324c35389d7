import Foundation
import Testing
@testable import Courier

/// The per-session TLS session cache of wss connections (``CurlTLSSessionCache``), against
/// `ntlm_server.py`'s TLS port, whose 101 says whether the connection resumed a TLS session
/// (`X-TLS-Session-Reused`, Python's `SSLSocket.session_reused`).
@Suite("WebSocket TLS session resumption", .serialized)
struct WebSocketTLSSessionResumptionTests {
    /// A session that trusts the NTLM server's test PKI.
    private static func session(_ server: NTLMTestServer, delegate: (any URLSessionDelegate)? = nil) -> URLSession {
        WebSocketTest.session(delegate: delegate) { $0.tlsTrustAnchors = TLSTrustAnchors(file: server.pki.rootCA.path) }
    }

    /// Opens wss `path` in `session`, echoes one message, closes, and returns the 101's
    /// `X-TLS-Session-Reused` (`nil` when the task did not open or the field is missing).
    private static func resumed(_ path: String, in session: URLSession, server: NTLMTestServer) async throws -> String? {
        let task = session.webSocketTask(with: server.url(path, scheme: "wss"))
        task.resume()
        defer { task.cancel(with: .normalClosure, reason: nil) }
        try await WebSocketTest.send(.string("resume?"), on: task)
        guard WebSocketTest.text(try await WebSocketTest.receive(task)) == "resume?" else { return nil }
        return (task.response as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-TLS-Session-Reused")
    }

    @Test func aSecondTaskToTheSameServerResumesTheFirstTasksTLSSession() async throws {
        let server = try await NTLMTestServer.shared()
        let session = Self.session(server)
        defer { session.invalidateAndCancel() }
        let first = try await Self.resumed("/ws-open", in: session, server: server)
        let second = try await Self.resumed("/ws-open", in: session, server: server)
        #expect(first == "0" && second == "1")
    }

    /// Connections made at once (each on its own thread) look the cache up and store in it
    /// together, which libcurl locks (the TSan pass runs this suite). Each of them offers the cached
    /// session (libcurl's trace, checked by hand), but the Python server declines one now and then
    /// when several offer it at once (0–2 of 8 seen), so what must hold is that every one opens,
    /// and that the cache still serves the next connection.
    @Test func connectionsMadeAtOnceAllOpenAndTheCacheServesTheNextOne() async throws {
        let server = try await NTLMTestServer.shared()
        let session = Self.session(server)
        defer { session.invalidateAndCancel() }
        _ = try await Self.resumed("/ws-open", in: session, server: server)
        let all = try await withThrowingTaskGroup(of: String?.self) { group in
            for _ in 0..<8 { group.addTask { try await Self.resumed("/ws-open", in: session, server: server) } }
            return try await group.reduce(into: [String?]()) { $0.append($1) }
        }
        let next = try await Self.resumed("/ws-open", in: session, server: server)
        #expect(all.count == 8 && all.allSatisfy { $0 == "0" || $0 == "1" } && next == "1", "\(all), then \(String(describing: next))")
    }

    @Test func anotherSessionDoesNotResumeTheFirstSessionsTLSSession() async throws {
        let server = try await NTLMTestServer.shared()
        let one = Self.session(server)
        defer { one.invalidateAndCancel() }
        let other = Self.session(server)
        defer { other.invalidateAndCancel() }
        let inOne = try await Self.resumed("/ws-open", in: one, server: server)
        let inOther = try await Self.resumed("/ws-open", in: other, server: server)
        #expect(inOne == "0" && inOther == "0")
    }

    /// The 401 ends the first connection; the retry with the credential is a new connection, which
    /// resumes the first one's TLS session instead of a full handshake: Basic (`/ws-basic`), and
    /// NTLM's three messages on their one connection after the 401 (`/ws`).
    @Test(arguments: [("/ws-basic", NSURLAuthenticationMethodHTTPBasic), ("/ws", NSURLAuthenticationMethodNTLM)])
    func theConnectionAfterA401ResumesTheTLSSessionOfTheRefusedOne(path: String, method: String) async throws {
        let server = try await NTLMTestServer.shared()
        let answerer = WebSocketChallengeAnswerer([(.useCredential, URLCredential(user: "user", password: "secret", persistence: .none))])
        let session = Self.session(server, delegate: answerer)
        defer { session.invalidateAndCancel() }
        let retry = try await Self.resumed(path, in: session, server: server)
        #expect(retry == "1" && answerer.seen.current.map(\.method) == [method])
    }
}
