import Foundation

/// The interface a ``URLProtocol`` reports to: responses, data, redirects, cache hits,
/// authentication challenges, completion and failure.
///
/// The loading system provides the client; a protocol may call it from any thread. Courier delivers
/// what the protocol reports to the task's delegate or completion handler, in order, on the
/// session's delegate queue.
public protocol URLProtocolClient: NSObjectProtocol, Sendable {
    /// The protocol was redirected to `request`; `redirectResponse` is the response that redirected it.
    /// The session asks its delegate whether to follow, and if so starts a new load for the request.
    func urlProtocol(_ protocol: URLProtocol, wasRedirectedTo request: URLRequest, redirectResponse: URLResponse)

    /// The protocol found its ``URLProtocol/cachedResponse`` valid: it becomes the task's response and body.
    func urlProtocol(_ protocol: URLProtocol, cachedResponseIsValid cachedResponse: CachedURLResponse)

    /// The protocol received the response for its request.
    func urlProtocol(_ protocol: URLProtocol, didReceive response: URLResponse, cacheStoragePolicy policy: URLCache.StoragePolicy)

    /// The protocol loaded some of the body.
    func urlProtocol(_ protocol: URLProtocol, didLoad data: Data)

    /// The protocol finished loading successfully.
    func urlProtocolDidFinishLoading(_ protocol: URLProtocol)

    /// The protocol failed.
    func urlProtocol(_ protocol: URLProtocol, didFailWithError error: any Error)

    /// The protocol needs credentials: the task's delegate is asked, and its answer goes to the
    /// challenge's sender.
    func urlProtocol(_ protocol: URLProtocol, didReceive challenge: URLAuthenticationChallenge)

    /// The protocol withdrew a challenge it had sent.
    func urlProtocol(_ protocol: URLProtocol, didCancel challenge: URLAuthenticationChallenge)
}
