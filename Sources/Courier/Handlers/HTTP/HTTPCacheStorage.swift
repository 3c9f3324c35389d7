import Foundation

/// Whether an HTTP response may be stored in the session's cache (RFC 9111 §3), and which
/// responses make a stored one obsolete (§4.4).
enum HTTPCacheStorage {
    /// The statuses whose responses Courier caches: those RFC 9110 §15.1 makes heuristically
    /// cacheable, less `206` (partial content is not stored) and the redirects the task follows.
    static let cacheableStatuses: Set<Int> = [200, 203, 204, 300, 301, 404, 405, 410, 414, 501]

    /// Methods that do not change the resource: their responses never invalidate a stored one.
    static let safeMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE"]

    /// The storage policy the handler reports with `response` to `request`, which was sent with
    /// `credentials`.
    ///
    /// `.allowed` for a `GET` response with a status in ``cacheableStatuses``, unless the request
    /// or the response says `no-store`, the response has `Vary: *`, or the request carries the
    /// caller's own conditional or range headers; `.notAllowed` otherwise. The cache is shared by
    /// sessions and runs, so users are kept apart (see ``HTTPCacheCredentials``):
    /// - a response to a load that authorized itself is stored only when it is `public` and not
    ///   `private` (RFC 9111 §3.5; `s-maxage` and `must-revalidate`, which the RFC also accepts,
    ///   do not count: Courier's freshness is a private cache's, and neither says the content is
    ///   the same for every user);
    /// - a response that sets cookies is stored only when it is `public` (it would hand one user's
    ///   new cookies to the next);
    /// - a response to a load that sent cookies is stored only under the scope made from those
    ///   very cookies (the task marked the request with it; a cookie added in between makes it
    ///   not stored).
    ///
    /// Otherwise `private` responses are stored: no credential identifies the user they are for.
    /// Whether the body is small enough for the cache is the task's decision.
    static func policy(for response: HTTPURLResponse, request: URLRequest,
                       credentials: HTTPCacheCredentials = HTTPCacheCredentials()) -> URLCache.StoragePolicy {
        let control = HTTPCacheControl(response: response)
        let shared = control.isPublic && !control.isPrivate
        guard request.uppercasedHTTPMethod == "GET",
              cacheableStatuses.contains(response.statusCode),
              !HTTPCacheControl(request: request).noStore,
              !control.noStore,
              !URLCacheVary.variesOnEverything(response),
              !HTTPCacheValidation.callerConditionHeaders.contains(where: { request.value(forHTTPHeaderField: $0) != nil }),
              shared || !credentials.authorizes,
              shared || response.value(forHTTPHeaderField: "Set-Cookie") == nil,
              credentials.matchScope(of: request)
        else { return .notAllowed }
        return .allowed
    }

    /// Whether `response` to `request` makes the stored response for the same URL obsolete: a
    /// successful or redirecting (2xx, 3xx) answer to an unsafe method such as `POST`, `PUT` or
    /// `DELETE` (RFC 9111 §4.4).
    static func invalidatesStoredResponse(_ response: HTTPURLResponse, request: URLRequest) -> Bool {
        let method = request.uppercasedHTTPMethod
        return !safeMethods.contains(method) && (200...399).contains(response.statusCode)
    }
}
