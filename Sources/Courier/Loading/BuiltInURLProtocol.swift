import Foundation

/// The base class of Courier's own handlers — every built-in handler and the plugin bridge
/// (``PluginURLProtocol``): the operations the task may call beyond Apple's `URLProtocol`, each a
/// no-op here.
///
/// The task calls one only when the handler's ``ResolvedHandler/capabilities`` (its row in the scheme
/// table, or the plugin bridge's) declare it, and it gets the instance as a `BuiltInURLProtocol`
/// from ``ResolvedHandler/makeInstance(task:cachedResponse:client:)`` — which creates it from the
/// row's class — never by casting what it holds. A `URLProtocol` subclass an app registers is not
/// one, so none of this is ever called on it.
class BuiltInURLProtocol: URLProtocol {
    /// Continue producing data after ``BuiltInHandlerClient/canAcceptMoreData`` was `false`
    /// (``HandlerCapabilities/flowControl``). Called from any thread; harmless when the handler is not
    /// paused.
    func resumeProducing() {}

    /// Deliver the redirect response the handler reported, its body and the end of the load to the
    /// client: the delegate refused the redirect (``HandlerCapabilities/deliversRefusedRedirect``).
    func deliverRefusedRedirect() {}

    /// The scope of the responses to `request` when it is loaded in a session with `environment`,
    /// or `nil` when the load sends nothing that ties its response to a user
    /// (``HandlerCapabilities/cacheScoping``). The task asks before it looks the request up in the
    /// session's cache and marks the request with the answer (``URLCacheScope``).
    class func cacheScope(for request: URLRequest, environment: HandlerEnvironment) -> String? { nil }

    /// `.becomeStream`: hands the connection of `response` (the response this handler just
    /// reported, whose disposition the delegate decided) over for a stream task, and stops
    /// reporting. `completion` runs once, on any thread, with the connection or with why it cannot
    /// be had. By default there is none to hand over: `unsupportedURL`.
    func handOverConnection(after response: URLResponse,
                            completion: @escaping @Sendable (Result<HandedOverConnection, URLError>) -> Void) {
        completion(.failure(URLError(.unsupportedURL, url: response.url ?? request.url,
                                     description: "Only an http: request upgraded with 101 Switching Protocols can become a stream task in Courier.")))
    }
}
