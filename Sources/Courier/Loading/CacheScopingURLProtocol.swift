import Foundation

/// A handler whose loads may send credentials the request does not show, and which therefore
/// names the scope (``URLCacheScope``) its responses are cached under.
///
/// The task asks the handler class before it looks the request up in the session's cache, and
/// marks the request with the answer: the lookup then only finds entries stored for the same
/// scope (or for none), and the response of the load is stored under it. The HTTP handler answers
/// with a digest of the `Cookie` header it will send (the request's own, or the session's stored
/// cookies). Handlers that do not adopt the protocol have no scope.
protocol CacheScopingURLProtocol: URLProtocol {
    /// The scope of the responses to `request` when it is loaded in a session with
    /// `environment`, or `nil` when the load sends nothing that ties its response to a user.
    static func cacheScope(for request: URLRequest, environment: HandlerEnvironment) -> String?
}
