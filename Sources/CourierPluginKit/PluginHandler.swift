import Foundation

/// The base class of a plugin's handler, written like a `URLProtocol` subclass: override
/// ``startLoading()`` and ``stopLoading()`` and report to ``client``.
///
/// The host creates one instance per load, with the request and a client, and calls
/// ``startLoading()``, ``stopLoading()`` and ``resumeProducing()`` one at a time, never
/// concurrently, on its own threads; they should return promptly, so do blocking work on a queue of
/// your own. The client may be called from any thread.
open class PluginHandler: @unchecked Sendable {
    /// The request this handler loads.
    public let request: PluginRequest
    /// Where the handler reports its response, data and end.
    public let client: PluginClient

    /// Creates a handler for `request` reporting to `client`.
    public required init(request: PluginRequest, client: PluginClient) {
        self.request = request
        self.client = client
    }

    /// Whether this handler class can load `request`. When false the host fails the task with
    /// `URLError.resourceUnavailable`. The base class accepts every request of its schemes.
    open class func canInit(with request: PluginRequest) -> Bool { true }

    /// Starts loading. The base class fails with `unsupportedURL`.
    open func startLoading() {
        client.didFail(.unsupportedURL, message: "\(type(of: self)) does not implement startLoading()")
    }

    /// Stops loading: the task was cancelled, timed out or finished. Report nothing more. It may
    /// come after the handler reported its end; it must then do nothing.
    open func stopLoading() {}

    /// The consumer can take data again after ``PluginClient/canAcceptMoreData`` was false.
    open func resumeProducing() {}
}
