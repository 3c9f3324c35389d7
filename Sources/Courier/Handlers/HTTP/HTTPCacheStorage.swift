import Foundation

/// Whether an HTTP response may be stored in the session's cache (RFC 9111 §3), and which
/// responses make a stored one obsolete (§4.4).
enum HTTPCacheStorage {
    /// The statuses whose responses Courier caches: those RFC 9110 §15.1 makes heuristically
    /// cacheable, less `206` (partial content is not stored) and the redirects the task follows.
    static let cacheableStatuses: Set<Int> = [200, 203, 204, 300, 301, 404, 405, 410, 414, 501]

    /// Methods that do not change the resource: their responses never invalidate a stored one.
    static let safeMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE"]

    /// The storage policy the handler reports with `response` to `request`.
    ///
    /// `.allowed` for a `GET` response with a status in ``cacheableStatuses``, unless the request
    /// or the response says `no-store`, the response has `Vary: *`, or the request carries the
    /// caller's own conditional or range headers; `.notAllowed` otherwise. (`private` responses
    /// are allowed: Courier's cache belongs to one client. Whether the body is small enough for
    /// the cache is the task's decision.)
    static func policy(for response: HTTPURLResponse, request: URLRequest) -> URLCache.StoragePolicy {
        guard (request.httpMethod ?? "GET").uppercased() == "GET",
              cacheableStatuses.contains(response.statusCode),
              !HTTPCacheControl(request: request).noStore,
              !HTTPCacheControl(response: response).noStore,
              !URLCacheVary.variesOnEverything(response),
              !HTTPCacheValidation.callerConditionHeaders.contains(where: { request.value(forHTTPHeaderField: $0) != nil })
        else { return .notAllowed }
        return .allowed
    }

    /// Whether `response` to `request` makes the stored response for the same URL obsolete: a
    /// successful or redirecting (2xx, 3xx) answer to an unsafe method such as `POST`, `PUT` or
    /// `DELETE` (RFC 9111 §4.4).
    static func invalidatesStoredResponse(_ response: HTTPURLResponse, request: URLRequest) -> Bool {
        let method = (request.httpMethod ?? "GET").uppercased()
        return !safeMethods.contains(method) && (200...399).contains(response.statusCode)
    }
}
