import Foundation

/// The ``URLProtocolClient`` a task gives each handler instance it starts. It forwards every report
/// to the task, tagged with the instance's generation so reports from a stopped instance (after a
/// redirect, a cancel or a timeout) are ignored. Both are fixed: when a data task becomes a
/// download task, the data task's state machine forwards its load's reports to the successor.
final class TaskProtocolClient: NSObject, URLProtocolClient, BuiltInHandlerClient, Sendable {
    private let task: URLSessionTask
    private let generation: Int
    /// The load's configuration, fixed when the handler is made (``BuiltInHandlerClient/configuration``).
    let configuration: HandlerConfiguration
    /// The session's cache, which the task layer alone reads and writes.
    private let cache: URLCache?

    init(task: URLSessionTask, generation: Int, configuration: HandlerConfiguration, cache: URLCache?) {
        self.task = task
        self.generation = generation
        self.configuration = configuration
        self.cache = cache
    }

    func urlProtocol(_ protocol: URLProtocol, wasRedirectedTo request: URLRequest, redirectResponse: URLResponse) {
        task.handleRedirect(to: request, response: redirectResponse, generation: generation)
    }

    func urlProtocol(_ protocol: URLProtocol, cachedResponseIsValid cachedResponse: CachedURLResponse) {
        deliver(cachedResponse)
    }

    /// Delivers a cached response the handler judged valid as the result of the load.
    private func deliver(_ cachedResponse: CachedURLResponse) {
        task.handleResponse(cachedResponse.response, generation: generation)
        task.handleData(cachedResponse.data, generation: generation)
        task.complete(error: nil, generation: generation)
    }

    func urlProtocol(_ protocol: URLProtocol, didReceive response: URLResponse, cacheStoragePolicy policy: URLCache.StoragePolicy) {
        task.handleResponse(response, storagePolicy: policy, generation: generation)
    }

    func urlProtocol(_ protocol: URLProtocol, didLoad data: Data) {
        task.handleData(data, generation: generation)
    }

    func urlProtocolDidFinishLoading(_ protocol: URLProtocol) {
        task.complete(error: nil, generation: generation)
    }

    func urlProtocol(_ protocol: URLProtocol, didFailWithError error: any Error) {
        task.complete(error: error, generation: generation)
    }

    func urlProtocol(_ protocol: URLProtocol, didReceive challenge: URLAuthenticationChallenge) {
        task.handleChallenge(challenge, generation: generation)
    }

    func urlProtocol(_ protocol: URLProtocol, didCancel challenge: URLAuthenticationChallenge) {}

    // MARK: BuiltInHandlerClient

    func didCollectTransactionMetrics(_ update: @escaping @Sendable (inout URLSessionTaskTransactionMetrics.Values) -> Void) {
        task.handleTransactionMetrics(update, generation: generation)
    }

    var canAcceptMoreData: Bool { task.canAcceptMoreData(generation: generation) }

    func didSendBodyData(_ bytesSent: Int64, totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {
        task.handleSentBodyData(bytesSent, total: totalBytesSent, expected: totalBytesExpectedToSend, generation: generation)
    }

    func didResume(atOffset offset: Int64, expectedTotalBytes: Int64) {
        task.handleResumed(atOffset: offset, expectedTotalBytes: expectedTotalBytes, generation: generation)
    }

    func taskIsWaitingForConnectivity() {
        task.handleWaitingForConnectivity(generation: generation)
    }

    func needNewBodyStream(_ completion: @escaping @Sendable (InputStream?) -> Void) {
        task.handleNeedNewBodyStream(generation: generation, completion: completion)
    }

    func setResumeValidator(_ validator: String) {
        task.handleResumeValidator(validator, generation: generation)
    }

    func didRevalidateCachedResponse(_ refreshed: CachedURLResponse, for request: URLRequest,
                                     storagePolicy: URLCache.StoragePolicy) {
        if storagePolicy == .notAllowed {
            cache?.removeCachedResponse(for: request)
        } else {
            cache?.storeCachedResponse(refreshed, for: request)
        }
        deliver(refreshed)
    }

    func cachedResponseIsObsolete(for url: URL) {
        cache?.removeCachedResponse(for: URLRequest(url: url))
    }
}
