import Foundation

/// Whose cache entry a response is: the credentials a task's request carried that the cache must
/// not share (its cookies), as an opaque digest.
///
/// A task marks each request it loads with the scope its handler computed (the digest of the
/// `Cookie` header the handler sends, from the request or from the session's cookie storage; see
/// `HandlerCapabilities.cacheScoping`). `URLCache` keeps the scope of the request an entry was stored for
/// and returns the entry only for a request with the same scope: an entry stored for Alice's
/// cookies answers neither Bob's nor a request without cookies, and an entry stored without a
/// scope (no cookies, or the app's own `storeCachedResponse(_:for:)` with a request it made)
/// answers no request that sends cookies. The scope is part of the key, but there is still one
/// entry per URL: storing under one scope replaces the entry of another.
///
/// Scopes are digests, never credentials: the disk store persists them with the entry.
enum URLCacheScope {
    /// Property key: the scope (`String`).
    static let key = "Courier.CacheScope"

    /// The scope `request` was marked with, if any.
    static func of(_ request: URLRequest) -> String? {
        request.protocolProperty(forKey: key) as? String
    }

    /// Marks `request` with `scope`, or removes any mark when `scope` is `nil`.
    static func mark(_ request: inout URLRequest, with scope: String?) {
        if let scope {
            request.setProtocolProperty(scope, forKey: key)
        } else {
            request.removeProtocolProperty(forKey: key)
        }
    }

    /// Whether an entry stored with `stored` may answer `request`: when both have the same scope,
    /// or neither has one.
    static func request(_ request: URLRequest, mayUse stored: String?) -> Bool {
        of(request) == stored
    }
}
