import Foundation

/// Session-wide events: the session becoming invalid, and authentication challenges that concern
/// the whole session (server trust, client certificates). Every method is optional.
public protocol URLSessionDelegate: NSObjectProtocol, Sendable {
    /// The session was invalidated; the delegate is released after this call. `error` is nil when
    /// the app invalidated it.
    func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?)

    /// A connection-level challenge. Without an implementation the session performs default
    /// handling (a task's own delegate leaves it to the session's delegate).
    func urlSession(_ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void)

    /// A background session delivered every event the transfer agent had stored for it (after it
    /// connected, or when its last running task ended). Apple's platforms call it when the app was
    /// launched for the session's events; Linux cannot launch apps, so it marks the end of a batch.
    func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession)
}

extension URLSessionDelegate {
    /// Does nothing.
    public func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {}

    /// Does nothing.
    public func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {}

    /// Performs default handling; in a task's own delegate, leaves the challenge to the session's
    /// delegate.
    public func urlSession(_ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
                           completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        if DelegateFallthrough.defers(.challenge, of: self) { return }
        completionHandler(.performDefaultHandling, nil)
    }
}
