import Foundation

/// The cache side of one HTTP handler instance: the stored response it is revalidating, the
/// conditional headers that ask about it, and the refreshed response a `304 Not Modified` made of
/// it. Thread-safe: the handler's queue and the libcurl loop thread both use it.
final class HTTPCacheExchange: @unchecked Sendable {
    private let lock = Lock()
    /// The stored response the current request asks about, if it is conditional.
    private var revalidating: CachedURLResponse?
    /// The headers that make the request conditional.
    private var conditions: [HTTPCacheConditionalHeader] = []
    /// The stored response with the 304's headers, once one arrived.
    private var refreshed: CachedURLResponse?

    /// Makes every attempt of this load a conditional request about `cached`.
    func beginRevalidation(of cached: CachedURLResponse, with headers: [HTTPCacheConditionalHeader]) {
        lock.withLock {
            revalidating = cached
            conditions = headers
            refreshed = nil
        }
    }

    /// `request` as it goes on the wire: with the conditional headers when revalidating.
    func outgoingRequest(for request: URLRequest) -> URLRequest {
        let headers = lock.withLock { conditions }
        guard !headers.isEmpty else { return request }
        var outgoing = request
        for header in headers { outgoing.setValue(header.value, forHTTPHeaderField: header.name) }
        return outgoing
    }

    /// Whether `response` is the server's `304` to this load's conditional request; if so, the
    /// refreshed stored response is kept for ``takeRefreshed()``.
    func acceptNotModified(_ response: HTTPURLResponse) -> Bool {
        guard response.statusCode == 304 else { return false }
        return lock.withLock {
            guard let revalidating, let updated = HTTPCacheValidation.refreshed(revalidating, with: response) else { return false }
            refreshed = updated
            return true
        }
    }

    /// Whether a `304` refreshed the stored response, which ``takeRefreshed()`` then returns.
    var hasRefreshed: Bool {
        lock.withLock { refreshed != nil }
    }

    /// The refreshed stored response, once (then `nil`).
    func takeRefreshed() -> CachedURLResponse? {
        lock.withLock {
            defer { refreshed = nil }
            return refreshed
        }
    }
}
