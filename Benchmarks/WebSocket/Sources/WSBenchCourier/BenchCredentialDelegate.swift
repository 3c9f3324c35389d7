import Courier
import Foundation

/// Answers every authentication challenge (Basic, Digest, NTLM: whatever the server offers) with
/// one `user:password`, for the `handshakes` measurement; server trust gets default handling.
final class BenchCredentialDelegate: NSObject, URLSessionWebSocketDelegate, Sendable {
    private let credential: URLCredential

    /// `userPassword` is `user:password`.
    init(_ userPassword: String) {
        let parts = userPassword.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        credential = URLCredential(user: String(parts[0]), password: parts.count > 1 ? String(parts[1]) : "", persistence: .none)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        guard challenge.protectionSpace.authenticationMethod != NSURLAuthenticationMethodServerTrust,
              challenge.previousFailureCount == 0 else {
            completionHandler(challenge.previousFailureCount == 0 ? .performDefaultHandling : .cancelAuthenticationChallenge, nil)
            return
        }
        completionHandler(.useCredential, credential)
    }
}
