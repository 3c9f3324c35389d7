import Foundation

/// What Courier's own handlers may ask of their client beyond Apple's ``URLProtocolClient``: their
/// configuration, back-pressure, upload progress, resumable downloads and the cache entries their
/// responses change. Custom `URLProtocol` subclasses need none of it; the task's client adopts both
/// protocols.
protocol BuiltInHandlerClient: AnyObject, Sendable {
    /// The load's configuration, fixed when the client (and so the handler) was made.
    var configuration: HandlerConfiguration { get }

    /// Adds what the handler measured about the current exchange (connection, TLS, byte counts,
    /// protocol name) to the task's metrics.
    func didCollectTransactionMetrics(_ update: @escaping @Sendable (inout URLSessionTaskTransactionMetrics.Values) -> Void)

    /// `false` while the task is suspended or its consumer lags too far behind; a handler then stops
    /// producing until its ``BuiltInURLProtocol/resumeProducing()`` is called.
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

    /// The handler revalidated the cached response it was given and the server confirmed it:
    /// `refreshed` is that response with the confirmation's header fields. The task stores it in the
    /// session's cache for `request` — or, when `storagePolicy` is `.notAllowed` (the refreshed
    /// headers no longer let it be stored for this load's credentials), removes the entry — and
    /// delivers it as the result, as `cachedResponseIsValid`.
    func didRevalidateCachedResponse(_ refreshed: CachedURLResponse, for request: URLRequest,
                                     storagePolicy: URLCache.StoragePolicy)

    /// The response the handler is about to report makes the stored response for `url` obsolete (a
    /// successful answer to `POST`, `PUT`, `DELETE`…): the task removes it from the session's cache.
    func cachedResponseIsObsolete(for url: URL)
}

extension BuiltInHandlerClient {
    /// The session's stores, settings and per-session resources (``HandlerConfiguration/environment``).
    var environment: HandlerEnvironment { configuration.environment }
}

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
