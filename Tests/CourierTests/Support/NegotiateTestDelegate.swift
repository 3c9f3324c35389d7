import Foundation
@testable import Courier

/// The delegate of the Negotiate tests (data and WebSocket tasks): answers each authentication
/// challenge with ``answer`` while its previous failure count is 0 and performs default handling
/// after that, and records the challenges' methods and protocols, the body, the WebSocket events and the
/// completion.
final class NegotiateTestDelegate: NSObject, URLSessionWebSocketDelegate, URLSessionDataDelegate, @unchecked Sendable {
    /// What the task told the delegate.
    struct Seen: Sendable {
        var challenges: [String] = []
        /// The protocol of each challenge's protection space ("http", "https"), in order.
        var spaceProtocols: [String] = []
        var body = Data()
        var events: [String] = []
        var completed: [(any Error)?] = []
    }

    /// The first answer to a challenge.
    let answer: (URLSession.AuthChallengeDisposition, URLCredential?)
    /// Whether a server-trust challenge is answered by accepting the server's trust (otherwise it
    /// gets ``answer`` as any challenge).
    let acceptsServerTrust: Bool
    let seen = Locked(Seen())

    /// Answers a first challenge with `disposition` and `credential` (the default: a credential for
    /// another user than the ticket's, with a password: libcurl and Courier use the ticket cache,
    /// not the credential, so the server still sees the ticket's user).
    /// With `acceptsServerTrust`, a server-trust challenge (forwarded from the session: this
    /// delegate has no session-level method) is answered with the server's trust.
    init(_ disposition: URLSession.AuthChallengeDisposition = .useCredential,
         _ credential: URLCredential? = URLCredential(user: "not-the-ticket-user", password: "unused", persistence: .none),
         acceptsServerTrust: Bool = false) {
        answer = (disposition, credential)
        self.acceptsServerTrust = acceptsServerTrust
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        seen.withLock {
            $0.challenges.append(challenge.protectionSpace.authenticationMethod)
            $0.spaceProtocols.append(challenge.protectionSpace.protocol ?? "")
        }
        if acceptsServerTrust, let trust = challenge.protectionSpace.serverTrust {
            completionHandler(.useCredential, URLCredential(trust: trust))
        } else if challenge.previousFailureCount == 0 {
            completionHandler(answer.0, answer.1)
        } else {
            completionHandler(.performDefaultHandling, nil)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        seen.withLock { $0.body.append(data) }
    }

    func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol protocol: String?) {
        seen.withLock { $0.events.append("open") }
    }

    func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask,
                    didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?) {
        seen.withLock { $0.events.append("close") }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        seen.withLock { $0.completed.append(error); $0.events.append("complete") }
    }

    /// Waits (bounded) for the completion and returns its error.
    func completion() async throws -> (any Error)? {
        guard await waitUntil({ !self.seen.current.completed.isEmpty }) else { throw TestTimeout(what: "the task's completion") }
        return seen.current.completed[0]
    }
}
