import Foundation

/// What the HTTP handler does with the cached response the task gave it (RFC 9111 §4), and how a
/// `304 Not Modified` refreshes it (§4.3).
///
/// The task has already applied the `returnCacheData…` and `reloadIgnoring…` policies; the handler
/// sees a cached response only under `useProtocolCachePolicy` and `reloadRevalidatingCacheData`.
enum HTTPCacheValidation: Equatable, Sendable {
    /// The stored response is fresh and may be used without contacting the server.
    case useStored
    /// Ask the server whether the stored response is still valid, with these conditional headers.
    case revalidate([HTTPCacheConditionalHeader])
    /// Ignore the stored response and load normally.
    case load

    /// Request headers that make a request conditional or partial. A request that already carries
    /// one is the caller's own exchange: it is sent as is and its answer is passed through.
    static let callerConditionHeaders = ["If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since",
                                         "If-Range", "Range"]

    /// Response headers a `304` must not change in the stored response: the stored body's framing
    /// and encoding (the body is kept decoded) and hop-by-hop fields.
    static let headersKeptOn304: Set<String> = ["content-length", "content-encoding", "transfer-encoding", "content-range",
                                                "connection", "keep-alive", "te", "trailer", "upgrade",
                                                "proxy-authenticate", "proxy-authorization"]

    /// Decides how to use `cached` for `request`.
    ///
    /// - The caller's own conditional or range headers: ``load``.
    /// - `reloadRevalidatingCacheData`, `no-cache` in the request (or `Pragma: no-cache`) or in the
    ///   response: ``revalidate(_:)`` when the response has a validator, else ``load``.
    /// - Fresh (taking the request's `max-age`, `min-fresh` and `max-stale` into account; a
    ///   `must-revalidate` response is never used stale): ``useStored``.
    /// - Stale: ``revalidate(_:)`` with `If-None-Match` / `If-Modified-Since` when the response has
    ///   an `ETag` / `Last-Modified`, else ``load``.
    ///
    /// - Parameters:
    ///   - cached: The stored response; anything but an HTTP response is ignored.
    ///   - request: The request being loaded.
    ///   - receivedAt: When the stored response arrived (was stored), if known.
    ///   - now: The current time.
    static func decide(cached: CachedURLResponse, request: URLRequest, receivedAt: Date?, now: Date = Date()) -> HTTPCacheValidation {
        guard let stored = cached.response as? HTTPURLResponse,
              request.uppercasedHTTPMethod == "GET",
              !callerConditionHeaders.contains(where: { request.value(forHTTPHeaderField: $0) != nil }) else { return .load }
        let validators = conditionalHeaders(for: stored)
        let revalidation: HTTPCacheValidation = validators.isEmpty ? .load : .revalidate(validators)
        if request.cachePolicy == .reloadRevalidatingCacheData { return revalidation }

        let requestControl = HTTPCacheControl(request: request)
        let responseControl = HTTPCacheControl(response: stored)
        if requestControl.noCache || responseControl.noCache { return revalidation }

        let freshness = HTTPCacheFreshness(response: stored, receivedAt: receivedAt, now: now)
        var acceptable = freshness.lifetime - freshness.currentAge > (requestControl.minFresh ?? 0)
        if !acceptable, !freshness.isFresh, let maxStale = requestControl.maxStale, !responseControl.mustRevalidate {
            acceptable = freshness.staleness <= maxStale
        }
        if let maxAge = requestControl.maxAge, freshness.currentAge > maxAge {
            acceptable = false
        }
        return acceptable ? .useStored : revalidation
    }

    /// The conditional headers that ask whether `response` is still current: `If-None-Match` with
    /// its `ETag` and `If-Modified-Since` with its `Last-Modified` (both when it has both).
    static func conditionalHeaders(for response: HTTPURLResponse) -> [HTTPCacheConditionalHeader] {
        var headers: [HTTPCacheConditionalHeader] = []
        if let tag = response.value(forHTTPHeaderField: "ETag")?.trimmingCharacters(in: .whitespaces), !tag.isEmpty {
            headers.append(HTTPCacheConditionalHeader(name: "If-None-Match", value: tag))
        }
        if let modified = response.value(forHTTPHeaderField: "Last-Modified")?.trimmingCharacters(in: .whitespaces),
           !modified.isEmpty {
            headers.append(HTTPCacheConditionalHeader(name: "If-Modified-Since", value: modified))
        }
        return headers
    }

    /// `cached` with its header fields updated from a `304 Not Modified` (RFC 9111 §3.2): each
    /// field of the 304 replaces the stored one, except ``headersKeptOn304``. The status, URL,
    /// body, user info and storage policy stay. `nil` when `cached` is not an HTTP response.
    static func refreshed(_ cached: CachedURLResponse, with notModified: HTTPURLResponse) -> CachedURLResponse? {
        guard let stored = cached.response as? HTTPURLResponse, let url = stored.url else { return nil }
        var fields = stored.headerFields
        for field in notModified.headerFields where !headersKeptOn304.contains(field.name.lowercased()) {
            fields.set(field.value, for: field.name)
        }
        let response = HTTPURLResponse(url: url, statusCode: stored.statusCode, httpVersion: stored.httpVersion, fields: fields)
        return CachedURLResponse(response: response, data: cached.data, userInfo: cached.userInfo,
                                 storagePolicy: cached.storagePolicy)
    }
}

/// One header of a conditional request.
struct HTTPCacheConditionalHeader: Equatable, Sendable {
    /// The header name, `If-None-Match` or `If-Modified-Since`.
    var name: String
    /// The stored response's validator.
    var value: String
}
