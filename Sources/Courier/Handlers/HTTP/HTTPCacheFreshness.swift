import Foundation

/// How long a stored HTTP response stays fresh and how old it is now (RFC 9111 §4.2).
///
/// - **Freshness lifetime**: the response's `Cache-Control: max-age`; else `Expires` − `Date`
///   (an `Expires` that cannot be parsed means already expired); else, for a status that is
///   heuristically cacheable, 10% of the time between `Last-Modified` and `Date`, at most
///   ``heuristicLimit``; else 0. `s-maxage` is ignored: Courier's cache is private.
/// - **Current age**: the larger of the `Age` header and the time between `Date` and the moment
///   the response arrived, plus the time it has been stored since. The arrival time is when the
///   cache stored it; for a response whose storage time is unknown it is taken to be its `Date`.
///
/// Dates are parsed leniently (IMF-fixdate, RFC 850 and asctime forms).
struct HTTPCacheFreshness: Equatable, Sendable {
    /// The longest heuristic lifetime given to a response without explicit freshness (24 hours).
    static let heuristicLimit: TimeInterval = 24 * 60 * 60
    /// The share of the time since `Last-Modified` a heuristic lifetime is (10%).
    static let heuristicFraction = 0.1
    /// Statuses a cache may give a heuristic lifetime (RFC 9110 §15.1).
    static let heuristicallyCacheableStatuses: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]

    /// How long the response is fresh for, counted from its generation at the origin, in seconds.
    let lifetime: TimeInterval
    /// How old the response is now, in seconds.
    let currentAge: TimeInterval
    /// Whether the lifetime came from the `Last-Modified` heuristic rather than the server.
    let isHeuristic: Bool

    /// Whether the response is still fresh.
    var isFresh: Bool { lifetime > currentAge }

    /// How far past its lifetime the response is (0 while fresh).
    var staleness: TimeInterval { max(0, currentAge - lifetime) }

    /// Computes freshness from known values (used by tests and by the other initializer).
    init(lifetime: TimeInterval, currentAge: TimeInterval, isHeuristic: Bool = false) {
        self.lifetime = lifetime
        self.currentAge = currentAge
        self.isHeuristic = isHeuristic
    }

    /// The freshness of `response`, which arrived (was stored) at `receivedAt` (`nil`: unknown),
    /// as of `now`.
    init(response: HTTPURLResponse, receivedAt: Date?, now: Date = Date()) {
        let control = HTTPCacheControl(response: response)
        let date = Self.date(response, "Date")
        let arrival = receivedAt ?? date ?? now
        let origin = date ?? arrival

        var heuristic = false
        let lifetime: TimeInterval
        if let maxAge = control.maxAge {
            lifetime = maxAge
        } else if let expiresText = response.value(forHTTPHeaderField: "Expires") {
            lifetime = SetCookieParser.parseDate(expiresText).map { max(0, $0.timeIntervalSince(origin)) } ?? 0
        } else if Self.heuristicallyCacheableStatuses.contains(response.statusCode),
                  let modified = Self.date(response, "Last-Modified"), modified < origin {
            lifetime = min(origin.timeIntervalSince(modified) * Self.heuristicFraction, Self.heuristicLimit)
            heuristic = true
        } else {
            lifetime = 0
        }

        let ageValue = HTTPCacheControl.seconds(response.value(forHTTPHeaderField: "Age")?
            .trimmingCharacters(in: .whitespaces)) ?? 0
        let apparentAge = date.map { max(0, arrival.timeIntervalSince($0)) } ?? 0
        let residentTime = max(0, now.timeIntervalSince(arrival))
        self.init(lifetime: lifetime, currentAge: max(apparentAge, ageValue) + residentTime, isHeuristic: heuristic)
    }

    /// A date header of `response`, parsed, or `nil`.
    private static func date(_ response: HTTPURLResponse, _ name: String) -> Date? {
        response.value(forHTTPHeaderField: name).flatMap(SetCookieParser.parseDate)
    }
}
