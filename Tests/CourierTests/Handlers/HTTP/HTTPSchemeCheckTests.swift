import Foundation
import Testing
@testable import Courier

/// The handler's cheap scheme checks answer as `url.scheme?.lowercased()` does.
@Suite("HTTPSchemeCheck")
struct HTTPSchemeCheckTests {
    @Test("agrees with the URL's scheme, in any case, with and without a base URL")
    func agreesWithScheme() throws {
        let base = try #require(URL(string: "HTTPS://example.com/dir/"))
        let urls: [URL] = [
            URL(string: "http://example.com/a"), URL(string: "HTTP://example.com/a"), URL(string: "https://example.com"),
            URL(string: "HtTpS://example.com:8443/x?y#z"), URL(string: "httpx://example.com"), URL(string: "ftp://example.com"),
            URL(string: "file:///tmp/http:"), URL(string: "data:,https:"), URL(string: "http:relative"),
            URL(string: "page", relativeTo: base), URL(string: "//other.example/p", relativeTo: base),
        ].compactMap { $0 }
        var disagreements: [String] = []
        for url in urls {
            let scheme = url.scheme?.lowercased()
            if HTTPSchemeCheck.isHTTP(url) != (scheme == "http") || HTTPSchemeCheck.isHTTPS(url) != (scheme == "https") {
                disagreements.append(url.absoluteString)
            }
        }
        #expect(urls.count == 11)
        #expect(disagreements.isEmpty, "disagree with url.scheme: \(disagreements)")
    }
}
