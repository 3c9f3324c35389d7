import Foundation

/// A URL's origin (RFC 6454): scheme, host and port, the scheme and host compared without case and a
/// missing port standing for the scheme's default (80 for http, 443 for https).
///
/// Redirects drop `Authorization`, `Cookie` and `Proxy-Authorization` when they leave the origin, and
/// the session does not put its own `httpAdditionalHeaders` values of those fields back on such a
/// request.
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
    ///
    /// `Proxy-Authorization` is among them because a header field the app sets is sent as it is:
    /// libcurl sends it to the origin server on a direct connection and inside a CONNECT tunnel, and
    /// to the proxy only for plain http through one. Credentials for a proxy that Courier answers a
    /// proxy challenge with (or finds stored for the proxy's protection space) are not a header
    /// field: libcurl sends them to the proxy alone (`CURLOPT_PROXYUSERNAME`), on every hop.
    static let originBoundFields = ["Authorization", "Cookie", "Proxy-Authorization"]

    /// `request` sent on to `target` by a redirect: its URL replaced and, when `target` is another
    /// origin than the request's URL (or either has none), its ``originBoundFields`` removed.
    static func redirecting(_ request: URLRequest, to target: URL) -> URLRequest {
        var next = request
        next.url = target
        if !same(request.url, target) {
            for field in originBoundFields { next.setValue(nil, forHTTPHeaderField: field) }
        }
        return next
    }
}
