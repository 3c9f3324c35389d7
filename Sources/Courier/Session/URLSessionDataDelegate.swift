import Foundation

/// Events of data and upload tasks: the response, each piece of the body, and caching. Every
/// method is optional; one a task's own delegate does not implement goes to the session's delegate.
public protocol URLSessionDataDelegate: URLSessionTaskDelegate {
    /// The response arrived. Call the handler with `.allow` to continue or `.cancel` to stop; no body
    /// arrives until it is called. Without an implementation the task continues.
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void)

    /// The data task became a download task (after `.becomeDownload`).
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didBecome downloadTask: URLSessionDownloadTask)

    /// The data task became a stream task (after `.becomeStream`).
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didBecome streamTask: URLSessionStreamTask)

    /// A piece of the body, in order.
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data)

    /// The response is about to be cached: pass it on, a changed one, or `nil` to not cache.
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse,
                    completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void)
}

extension URLSessionDataDelegate {
    /// Allows the response.
    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                           completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        if DelegateFallthrough.defers(.response, of: self) { return }
        completionHandler(.allow)
    }

    /// Does nothing.
    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didBecome downloadTask: URLSessionDownloadTask) {
        DelegateFallthrough.defers(.becameDownload, of: self)
    }

    /// Does nothing.
    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didBecome streamTask: URLSessionStreamTask) {
        DelegateFallthrough.defers(.becameStream, of: self)
    }

    /// Does nothing.
    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        DelegateFallthrough.defers(.data, of: self)
    }

    /// Caches the proposed response.
    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse,
                           completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void) {
        if DelegateFallthrough.defers(.cacheResponse, of: self) { return }
        completionHandler(proposedResponse)
    }
}
