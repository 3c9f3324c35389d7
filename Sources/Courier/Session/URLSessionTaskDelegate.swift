import Foundation

/// Events of one task: redirects, challenges, body streams, upload progress, metrics and
/// completion. Every method is optional. A method a task's own delegate does not implement goes to
/// the session's delegate, as on Apple's platforms: its default implementation then does nothing.
public protocol URLSessionTaskDelegate: URLSessionDelegate {
    /// A redirect: call the handler with `request` to follow it, another request, or `nil` to stop
    /// and make the redirect response the task's response. Without an implementation redirects are
    /// followed.
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void)

    /// A challenge for this task. Without an implementation, session-wide challenges (server trust,
    /// client certificate, NTLM, Negotiate, SSH host key) go to the session-level method, others get
    /// default handling.
    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void)

    /// The task needs a (new) body stream: for a streamed upload, and when a body must be sent again.
    func urlSession(_ session: URLSession, task: URLSessionTask, needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void)

    /// Upload progress.
    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
                    totalBytesSent: Int64, totalBytesExpectedToSend: Int64)

    /// The task finished: `error` is nil on success. The last message about a task.
    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?)

    /// A task delayed by `earliestBeginDate` is about to start (background sessions only).
    func urlSession(_ session: URLSession, task: URLSessionTask, willBeginDelayedRequest request: URLRequest,
                    completionHandler: @escaping @Sendable (URLSession.DelayedRequestDisposition, URLRequest?) -> Void)

    /// The task's metrics, delivered just before its completion.
    func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics)

    /// The task cannot reach its server and waits for connectivity (sessions with
    /// `waitsForConnectivity`); called at most once per task.
    func urlSession(_ session: URLSession, taskIsWaitingForConnectivity task: URLSessionTask)
}

extension URLSessionTaskDelegate {
    /// Follows the redirect.
    public func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                           newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        if DelegateFallthrough.defers(.redirect, of: self) { return }
        completionHandler(request)
    }

    /// Passes session-wide challenges to the session-level method; default handling for others.
    public func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                           completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        if URLSession.isSessionWideAuthenticationMethod(challenge.protectionSpace.authenticationMethod) {
            urlSession(session, didReceive: challenge, completionHandler: completionHandler)
        } else if !DelegateFallthrough.defers(.challenge, of: self) {
            completionHandler(.performDefaultHandling, nil)
        }
    }

    /// Provides the request's own body stream, if any.
    public func urlSession(_ session: URLSession, task: URLSessionTask, needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void) {
        if DelegateFallthrough.defers(.needNewBodyStream, of: self) { return }
        completionHandler(task.originalRequest?.httpBodyStream)
    }

    /// Does nothing.
    public func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
                           totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {
        DelegateFallthrough.defers(.sentBodyData, of: self)
    }

    /// Does nothing.
    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        DelegateFallthrough.defers(.completion, of: self)
    }

    /// Continues loading.
    public func urlSession(_ session: URLSession, task: URLSessionTask, willBeginDelayedRequest request: URLRequest,
                           completionHandler: @escaping @Sendable (URLSession.DelayedRequestDisposition, URLRequest?) -> Void) {
        if DelegateFallthrough.defers(.delayedRequest, of: self) { return }
        completionHandler(.continueLoading, nil)
    }

    /// Does nothing.
    public func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics) {
        DelegateFallthrough.defers(.metrics, of: self)
    }

    /// Does nothing.
    public func urlSession(_ session: URLSession, taskIsWaitingForConnectivity task: URLSessionTask) {
        DelegateFallthrough.defers(.waitingForConnectivity, of: self)
    }
}

extension URLSession {
    /// Authentication methods that concern a connection rather than one request.
    static func isSessionWideAuthenticationMethod(_ method: String) -> Bool {
        method == NSURLAuthenticationMethodServerTrust || method == NSURLAuthenticationMethodClientCertificate
            || method == NSURLAuthenticationMethodNTLM || method == NSURLAuthenticationMethodNegotiate
            || method == NSURLAuthenticationMethodSSHHostKey
    }
}
