import Foundation
import Testing
@testable import Courier

/// NTLM for data tasks, which libcurl answers within one transfer, against `ntlm_server.py`
/// (pyspnego verifies the answer): the challenge goes to the delegate, a refused credential is
/// challenged again, and default handling uses the credential storage.
@Suite("HTTP NTLM authentication", .serialized)
struct HTTPNTLMAuthTests {
    private static let alice = URLCredential(user: "EXAMPLE\\alice", password: "wonderland", persistence: .none)

    /// A session with `delegate` (and `storage`) and no proxy.
    private static func session(_ delegate: (any URLSessionDelegate)?, storage: URLCredentialStorage? = nil) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.connectionProxyDictionary = [:]
        if let storage { configuration.urlCredentialStorage = storage }
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    /// The body and status of `/data`, or the error.
    private static func load(_ session: URLSession) async throws -> Result<(String, Int), URLError> {
        let server = try await NTLMTestServer.shared()
        do {
            let (data, response) = try await withTimeout(testWaitLimit, "the NTLM data task") {
                try await session.data(from: server.url("/data", scheme: "http"))
            }
            return .success((String(decoding: data, as: UTF8.self), (response as? HTTPURLResponse)?.statusCode ?? 0))
        } catch let error as URLError {
            return .failure(error)
        }
    }

    @Test func theDelegatesCredentialAuthenticates() async throws {
        let answerer = WebSocketChallengeAnswerer([(.useCredential, Self.alice)])
        let session = Self.session(answerer)
        defer { session.invalidateAndCancel() }
        let result = try await Self.load(session)
        let seen = answerer.seen.current
        #expect(try result.get() == ("authenticated EXAMPLE\\alice", 200) && seen.count == 1
                && seen[0].method == NSURLAuthenticationMethodNTLM && seen[0].previousFailureCount == 0 && seen[0].failureStatus == 401)
    }

    @Test func aWrongPasswordIsChallengedAgainAndCancellingFails() async throws {
        let wrong = URLCredential(user: "EXAMPLE\\alice", password: "wrong", persistence: .none)
        let answerer = WebSocketChallengeAnswerer([(.useCredential, wrong)])
        let session = Self.session(answerer)
        defer { session.invalidateAndCancel() }
        let result = try await Self.load(session)
        let seen = answerer.seen.current
        guard case .failure(let error) = result else {
            Issue.record("the wrong password was accepted: \(result)")
            return
        }
        #expect(error.code == .cancelled && seen.map(\.previousFailureCount) == [0, 1]
                && seen.allSatisfy { $0.method == NSURLAuthenticationMethodNTLM && $0.failureStatus == 401 })
    }

    @Test func defaultHandlingUsesTheStoredCredential() async throws {
        let server = try await NTLMTestServer.shared()
        let storage = URLCredentialStorage()
        let space = URLProtectionSpace(host: "127.0.0.1", port: server.httpPort, protocol: "http", realm: nil,
                                       authenticationMethod: NSURLAuthenticationMethodNTLM)
        storage.setDefaultCredential(URLCredential(user: "EXAMPLE\\alice", password: "wonderland", persistence: .forSession), for: space)
        let session = Self.session(nil, storage: storage)
        defer { session.invalidateAndCancel() }
        #expect(try await Self.load(session).get() == ("authenticated EXAMPLE\\alice", 200))
    }
}
