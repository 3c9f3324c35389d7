import Foundation

/// A URL's origin (RFC 6454): scheme, host and port, the scheme and host compared without case and a
/// missing port standing for the scheme's default (80 for http, 443 for https).
///
/// Redirects drop `Authorization` and `Cookie` when they leave the origin, and the session does not
/// put its own `httpAdditionalHeaders` values of those fields back on such a request.
struct URLOrigin: Equatable, Sendable {
    let scheme: String
    let host: String
    let port: Int?

    /// The origin of `url`; `nil` when it has no scheme or no host.
    init?(_ url: URL?) {
        guard let url, let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        self.scheme = scheme
        self.host = host
        switch scheme {
        case "http": port = url.port ?? 80
        case "https": port = url.port ?? 443
        default: port = url.port
        }
    }

    /// Whether `a` and `b` have the same origin; `false` when either has none.
    static func same(_ a: URL?, _ b: URL?) -> Bool {
        guard let first = URLOrigin(a), let second = URLOrigin(b) else { return false }
        return first == second
    }

    /// The header fields that must not follow a request to another origin.
    static let originBoundFields = ["Authorization", "Cookie"]
}
