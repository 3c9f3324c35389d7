#if COURIER_FUZZ
@testable import Courier
import Foundation

/// `HTTPCookie.cookies(withResponseHeaderFields:for:)`: the first byte picks the response's URL,
/// the rest is a `Set-Cookie` value. Every cookie must belong to the URL's host (RFC 6265 §5.3), and
/// written back as `Set-Cookie` it parses to the same name, value, domain and path.
enum SetCookieHarness {
    private static let urls = [
        "https://www.example.com/dir/page.html",
        "http://example.com",
        "http://127.0.0.1:8080/a/b/",
        "https://sub.domain.example.co.uk/x?y=1",
        "http://localhost/",
    ].compactMap { URL(string: $0) }

    static func run(_ input: Data) {
        guard let first = input.first, !urls.isEmpty else { return }
        let url = urls[Int(first) % urls.count]
        let value = String(decoding: input.dropFirst(), as: UTF8.self)
        let cookies = HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": value], for: url)
        guard let host = url.host?.lowercased() else { return }
        for cookie in cookies {
            fuzzCheck(!cookie.name.isEmpty, "a cookie without a name from \(value.prefix(200))")
            fuzzCheck(cookie.path.hasPrefix("/"), "path \(cookie.path) does not start with /")
            if cookie.domain.hasPrefix(".") {
                let domain = String(cookie.domain.dropFirst())
                fuzzCheck(host == domain || host.hasSuffix("." + domain),
                          "domain \(cookie.domain) set from \(host)")
            } else {
                fuzzCheck(cookie.domain == host, "host-only domain \(cookie.domain) set from \(host)")
            }
            roundTrip(cookie, url: url)
        }
        _ = HTTPCookie.requestHeaderFields(with: cookies)
    }

    private static func roundTrip(_ cookie: HTTPCookie, url: URL) {
        var line = "\(cookie.name)=\(cookie.value); Path=\(cookie.path)"
        if cookie.domain.hasPrefix(".") { line += "; Domain=\(cookie.domain)" }
        guard let again = SetCookieParser.cookie(fromSetCookie: line, for: url) else {
            fuzzCheck(false, "re-serialised cookie is refused: \(line.prefix(200))")
            return
        }
        fuzzCheck(again.name == cookie.name && again.value == cookie.value
                      && again.domain == cookie.domain && again.path == cookie.path,
                  "round trip changed the cookie: \(line.prefix(200))")
    }
}
#endif
