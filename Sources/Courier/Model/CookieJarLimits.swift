import Foundation

/// The limits an ``HTTPCookieStorage`` keeps, as browsers do, so a server (or thousands of
/// `Set-Cookie` lines) cannot make a cookie jar grow without bound.
///
/// RFC 6265 §6.1 asks for at least 4096 bytes per cookie, 50 cookies per domain and 3000 cookies in
/// all; browsers keep a little more per domain (Chrome 180, Firefox 150). Courier keeps:
/// - ``maximumNameAndValueBytes``: a cookie whose name and value together exceed 4096 bytes (UTF-8)
///   is refused, as Chrome and Firefox refuse it;
/// - ``maximumCookiesPerDomain``: 180 per domain (the cookie's domain, without a leading dot);
/// - ``maximumCookies``: 3000 in all.
///
/// Beyond a count the storage evicts expired cookies first, then the ones set longest ago (setting a
/// cookie again makes it the newest); the cookie being stored is never the one evicted.
enum CookieJarLimits {
    static let maximumNameAndValueBytes = 4096
    static let maximumCookiesPerDomain = 180
    static let maximumCookies = 3000

    /// Whether `cookie` is small enough to be stored.
    static func accepts(_ cookie: HTTPCookie) -> Bool {
        cookie.name.utf8.count + cookie.value.utf8.count <= maximumNameAndValueBytes
    }

    /// The domain a cookie counts against: its domain, lowercased, without a leading dot.
    static func domainKey(_ domain: String) -> String {
        let lowered = domain.lowercased()
        return lowered.hasPrefix(".") ? String(lowered.dropFirst()) : lowered
    }
}
