// Courier's `handshakes` measurement: WebSocket connections opened one after another, each answered
// a ping and closed, through a session whose delegate answers every authentication challenge with a
// credential (for Negotiate it only says "answer": the token comes from the ambient Kerberos ticket
// cache). Benchmarks/negotiate-part.sh runs it against a server that requires Negotiate and against
// the same server's unauthenticated endpoint.
import Courier
import Foundation
import WSBenchSupport

/// Answers each authentication challenge once with a fixed credential.
final class HandshakeChallengeAnswerer: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        guard challenge.previousFailureCount == 0 else {
            completionHandler(.cancelAuthenticationChallenge, nil)
            return
        }
        completionHandler(.useCredential, URLCredential(user: "bench", password: "", persistence: .none))
    }
}

/// Opens `count` connections to `url` one after another (after `warmup` not counted), each pinged
/// and closed, and reports handshakes per second.
func handshakes(url: URL, count: Int, warmup: Int) async throws {
    let session = URLSession(configuration: .ephemeral, delegate: HandshakeChallengeAnswerer(), delegateQueue: nil)
    func one() async throws {
        let task = session.webSocketTask(with: url)
        task.resume()
        try await task.sendPing()
        task.cancel(with: .normalClosure, reason: nil)
    }
    for _ in 0..<min(warmup, 20) { try await one() }
    let start = benchNow()
    for _ in 0..<count { try await one() }
    reportHandshakes(count: count, seconds: benchNow() - start)
    session.invalidateAndCancel()
}
