import Foundation

extension URLSession {
    /// What a delegate tells the session to do with a request delayed by `earliestBeginDate`.
    public enum DelayedRequestDisposition: Sendable {
        /// Cancel the task.
        case cancel
        /// Load the original request.
        case continueLoading
        /// Load the request passed along with this disposition.
        case useNewRequest
    }

    /// How a delegate answers an authentication challenge.
    public enum AuthChallengeDisposition: Int, Sendable {
        /// Use the credential passed along (none: continue without one).
        case useCredential
        /// Do what the session would do without a delegate: stored or URL credentials, else fail.
        case performDefaultHandling
        /// Cancel the task.
        case cancelAuthenticationChallenge
        /// Reject this protection space; the handler may offer another.
        case rejectProtectionSpace
    }

    /// How a data task's delegate answers the arrival of a response.
    public enum ResponseDisposition: Int, Sendable {
        /// Cancel the task, as with `cancel()`.
        case cancel
        /// Continue loading.
        case allow
        /// Continue as a download task: a new download task takes over the running load (same
        /// handler, same connection) and the body received so far; the delegate hears
        /// `urlSession(_:dataTask:didBecome:)` with it, then download messages, and the data task
        /// ends without a completion of its own.
        case becomeDownload
        /// Continue as a stream task over the same connection (an HTTP `Upgrade`): for an `http:`
        /// request with an `Upgrade` field answered `101` over HTTP/1.1, the delegate hears
        /// `urlSession(_:dataTask:didBecome:)` with a running stream task that reads the bytes sent
        /// after the head first, and the data task ends without a completion of its own. https,
        /// HTTP/2 and other responses fail the task with `unsupportedURL` (see
        /// `Documentation/Migration.md`).
        case becomeStream
    }
}
