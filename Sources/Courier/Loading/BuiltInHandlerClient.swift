import Foundation

/// What Courier's own handlers may ask of their client beyond Apple's ``URLProtocolClient``:
/// back-pressure, upload progress and resumable downloads. Custom `URLProtocol` subclasses need none
/// of it; the task's client adopts both protocols.
protocol BuiltInHandlerClient: AnyObject, Sendable {
    /// The session's stores, settings and per-session resources.
    var environment: HandlerEnvironment { get }

    /// Adds what the handler measured about the current exchange (connection, TLS, byte counts,
    /// protocol name) to the task's metrics.
    func didCollectTransactionMetrics(_ update: @escaping @Sendable (inout URLSessionTaskTransactionMetrics.Values) -> Void)

    /// `false` while the task is suspended or its consumer lags too far behind; a handler then stops
    /// producing until its ``FlowControlledURLProtocol/resumeProducing()`` is called.
    var canAcceptMoreData: Bool { get }

    /// The handler cannot reach the server and keeps retrying (`waitsForConnectivity`); the idle
    /// timeout is suspended until a response arrives.
    func taskIsWaitingForConnectivity()

    /// Reports body bytes sent by the handler (upload progress, `didSendBodyData`).
    func didSendBodyData(_ bytesSent: Int64, totalBytesSent: Int64, totalBytesExpectedToSend: Int64)

    /// The handler honoured the request's resume offset (see ``ResumeRequest``): the body it delivers
    /// continues at `offset`. A handler that cannot resume never calls this, and the task then starts
    /// the download over from byte zero.
    func didResume(atOffset offset: Int64, expectedTotalBytes: Int64)

    /// The handler must send the request body again (a retry after an authentication, trust or
    /// client-certificate challenge) but the body is a stream it has used: asks the task's delegate
    /// for a new one (`urlSession(_:task:needNewBodyStream:)`). `completion` gets `nil` when there is
    /// no delegate or it gives none.
    func needNewBodyStream(_ completion: @escaping @Sendable (InputStream?) -> Void)

    /// A string that changes when the resource changes (an entity tag, or size and modification
    /// time), stored in resume data and checked when resuming.
    func setResumeValidator(_ validator: String)
}

/// A handler that pauses when its client cannot accept more data and continues when told.
protocol FlowControlledURLProtocol: URLProtocol {
    /// Continue producing data after ``BuiltInHandlerClient/canAcceptMoreData`` was `false`.
    /// Called from any thread; harmless when the handler is not paused.
    func resumeProducing()
}

/// A built-in handler whose `startLoading()`, `stopLoading()` and (when flow-controlled)
/// `resumeProducing()` may be called from any thread, at any time — also while its transfer is
/// reporting on another thread, and before `startLoading()` has returned: it guards its own state.
/// The task then calls them directly on the thread that decides (the one resuming, cancelling or
/// receiving the last report) instead of through the handler's serial queue, which saves a thread
/// hop at the start and at the end of every load. Other calls still go through the queue.
protocol ConcurrentURLProtocol: URLProtocol {}

/// The request properties through which a download task asks a handler to resume.
enum ResumeRequest {
    /// Property key: the byte offset (`Int64`) to continue from.
    static let offsetKey = "Courier.ResumeOffset"
    /// Property key: the validator (`String`) the resource had when the partial download was made.
    static let validatorKey = "Courier.ResumeValidator"

    /// The offset and validator a request asks a handler to resume from, if any.
    static func parameters(of request: URLRequest) -> (offset: Int64, validator: String?)? {
        guard let offset = request.protocolProperty(forKey: offsetKey) as? Int64, offset > 0 else { return nil }
        return (offset, request.protocolProperty(forKey: validatorKey) as? String)
    }
}

/// A handler that, after reporting a redirect, can deliver the redirect response and its body as the
/// final result when the delegate refuses the redirect (Apple returns the 3xx with its body).
protocol RedirectRefusalDelivering: URLProtocol {
    /// Deliver the redirect response, its body and the end of the load to the client.
    func deliverRefusedRedirect()
}
