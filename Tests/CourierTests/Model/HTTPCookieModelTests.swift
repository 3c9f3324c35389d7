import Foundation
import Testing
@testable import Courier

@Suite("HTTPCookie")
struct HTTPCookieModelTests {

    private let url = URL(string: "https://www.example.com/docs/guide/index.html")!

    // MARK: - init(properties:)

    @Test func requiredPropertiesMakeACookie() throws {
        let cookie = try #require(HTTPCookie(properties: [
            .name: "session", .value: "abc", .path: "/", .domain: "Example.COM",
        ]))
        #expect(cookie.name == "session")
        #expect(cookie.value == "abc")
        #expect(cookie.path == "/")
        #expect(cookie.domain == "example.com")
        #expect(cookie.version == 0)
        #expect(cookie.expiresDate == nil)
        #expect(cookie.isSessionOnly)
        #expect(!cookie.isSecure)
        #expect(!cookie.isHTTPOnly)
        #expect(cookie.portList == nil)
        #expect(cookie.comment == nil)
        #expect(cookie.commentURL == nil)
    }

    @Test func missingRequiredPropertiesFail() {
        #expect(HTTPCookie(properties: [.value: "v", .path: "/", .domain: "a.com"]) == nil)
        #expect(HTTPCookie(properties: [.name: "n", .path: "/", .domain: "a.com"]) == nil)
        #expect(HTTPCookie(properties: [.name: "n", .value: "v", .domain: "a.com"]) == nil)
        #expect(HTTPCookie(properties: [.name: "n", .value: "v", .path: "/"]) == nil)
        // Wrong value types count as missing.
        #expect(HTTPCookie(properties: [.name: 42, .value: "v", .path: "/", .domain: "a.com"]) == nil)
    }

    @Test func originURLSuppliesTheDomain() throws {
        let fromURL = try #require(HTTPCookie(properties: [
            .name: "n", .value: "v", .path: "/", .originURL: URL(string: "http://Shop.Example.org/cart")!,
        ]))
        #expect(fromURL.domain == "shop.example.org")
        let fromString = try #require(HTTPCookie(properties: [
            .name: "n", .value: "v", .path: "/", .originURL: "http://other.example.org/",
        ]))
        #expect(fromString.domain == "other.example.org")
        // An explicit domain wins over the origin URL.
        let both = try #require(HTTPCookie(properties: [
            .name: "n", .value: "v", .path: "/", .domain: ".example.org", .originURL: "http://x.example.org/",
        ]))
        #expect(both.domain == ".example.org")
    }

    @Test func expiresAcceptsDatesAndStrings() throws {
        let date = Date(timeIntervalSince1970: 1_900_000_000)
        let withDate = try #require(HTTPCookie(properties: [
            .name: "n", .value: "v", .path: "/", .domain: "a.com", .expires: date,
        ]))
        #expect(withDate.expiresDate == date)
        #expect(!withDate.isSessionOnly)

        let withString = try #require(HTTPCookie(properties: [
            .name: "n", .value: "v", .path: "/", .domain: "a.com", .expires: "Sun, 06 Nov 1994 08:49:37 GMT",
        ]))
        #expect(withString.expiresDate == Date(timeIntervalSince1970: 784_111_777))
    }

    @Test func maximumAgeWinsOverExpires() throws {
        let before = Date()
        let cookie = try #require(HTTPCookie(properties: [
            .name: "n", .value: "v", .path: "/", .domain: "a.com",
            .expires: Date(timeIntervalSince1970: 0), .maximumAge: "3600",
        ]))
        let expires = try #require(cookie.expiresDate)
        #expect(expires.timeIntervalSince(before) >= 3599)
        #expect(expires.timeIntervalSince(before) <= 3601)
    }

    @Test func discardDecidesSessionOnly() throws {
        let kept = try #require(HTTPCookie(properties: [
            .name: "n", .value: "v", .path: "/", .domain: "a.com", .discard: "FALSE",
        ]))
        #expect(!kept.isSessionOnly)
        let discarded = try #require(HTTPCookie(properties: [
            .name: "n", .value: "v", .path: "/", .domain: "a.com", .discard: "TRUE",
            .expires: Date(timeIntervalSinceNow: 1000),
        ]))
        #expect(discarded.isSessionOnly)
    }

    @Test func versionOneCookieWithoutMaximumAgeIsSessionOnly() throws {
        // Apple: `.discard` defaults to "TRUE" for a version 1 cookie given no `.maximumAge`.
        let cookie = try #require(HTTPCookie(properties: [
            .name: "n", .value: "v", .path: "/", .domain: "a.com", .version: "1",
            .expires: Date(timeIntervalSinceNow: 1000),
        ]))
        #expect(cookie.isSessionOnly)
    }

    @Test func versionOneCookieWithMaximumAgeIsKept() throws {
        let cookie = try #require(HTTPCookie(properties: [
            .name: "n", .value: "v", .path: "/", .domain: "a.com", .version: "1", .maximumAge: "100",
        ]))
        #expect(!cookie.isSessionOnly)
    }

    @Test func versionDefaultsToZero() throws {
        let cookie = try #require(HTTPCookie(properties: [.name: "n", .value: "v", .path: "/", .domain: "a.com"]))
        #expect(cookie.version == 0)
    }

    @Test func cookieWithoutExpiryIsSessionOnly() throws {
        let cookie = try #require(HTTPCookie(properties: [.name: "n", .value: "v", .path: "/", .domain: "a.com"]))
        #expect(cookie.isSessionOnly)
    }

    @Test func flagsVersionPortsAndComments() throws {
        let cookie = try #require(HTTPCookie(properties: [
            .name: "n", .value: "v", .path: "/p", .domain: "a.com",
            .secure: "TRUE", .httpOnly: "TRUE", .version: "1", .port: "80, 8080",
            .comment: "why", .commentURL: "https://a.com/cookies",
        ]))
        #expect(cookie.isSecure)
        #expect(cookie.isHTTPOnly)
        #expect(cookie.version == 1)
        #expect(cookie.portList?.map(\.intValue) == [80, 8080])
        #expect(cookie.comment == "why")
        #expect(cookie.commentURL == URL(string: "https://a.com/cookies"))

        let notSecure = try #require(HTTPCookie(properties: [
            .name: "n", .value: "v", .path: "/", .domain: "a.com", .secure: "FALSE", .port: "80,8080",
        ]))
        #expect(!notSecure.isSecure)
        // A version 0 cookie keeps only the first port.
        #expect(notSecure.portList?.map(\.intValue) == [80])
    }

    @Test func propertiesRoundTrip() throws {
        let original = try #require(HTTPCookie(properties: [
            .name: "n", .value: "v", .path: "/p", .domain: ".a.com", .secure: "TRUE",
            .expires: Date(timeIntervalSince1970: 2_000_000_000), .comment: "c",
        ]))
        let properties = try #require(original.properties)
        #expect(properties[.name] as? String == "n")
        #expect(properties[.domain] as? String == ".a.com")
        let copy = try #require(HTTPCookie(properties: properties))
        #expect(copy.name == original.name)
        #expect(copy.value == original.value)
        #expect(copy.domain == original.domain)
        #expect(copy.path == original.path)
        #expect(copy.isSecure == original.isSecure)
        #expect(copy.expiresDate == original.expiresDate)
        #expect(copy.isSessionOnly == original.isSessionOnly)
        #expect(copy.comment == original.comment)
    }

    @Test func requestHeaderFieldsJoinCookies() throws {
        let a = try #require(HTTPCookie(properties: [.name: "a", .value: "1", .path: "/", .domain: "x.com"]))
        let b = try #require(HTTPCookie(properties: [.name: "b", .value: "2", .path: "/", .domain: "x.com"]))
        #expect(HTTPCookie.requestHeaderFields(with: [a, b]) == ["Cookie": "a=1; b=2"])
        #expect(HTTPCookie.requestHeaderFields(with: []) == [:])
    }

    @Test func descriptionNamesTheCookie() throws {
        let cookie = try #require(HTTPCookie(properties: [.name: "sid", .value: "xyz", .path: "/", .domain: "x.com"]))
        #expect(cookie.description.contains("name:\"sid\""))
        #expect(cookie.description.contains("domain:\"x.com\""))
    }

    // MARK: - Set-Cookie parsing

    @Test func parsesASimpleCookieWithDefaults() throws {
        let cookies = HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": "id=a3fWa"], for: url)
        let cookie = try #require(cookies.first)
        #expect(cookies.count == 1)
        #expect(cookie.name == "id")
        #expect(cookie.value == "a3fWa")
        #expect(cookie.domain == "www.example.com") // host-only: no leading dot
        #expect(cookie.path == "/docs/guide")       // default-path of the request URL
        #expect(cookie.isSessionOnly)
        #expect(cookie.expiresDate == nil)
    }

    @Test func parsesAttributes() throws {
        let header = "id=1; Domain=.Example.com; Path=/app; Secure; HttpOnly; SameSite=Lax; Unknown=x"
        let cookie = try #require(HTTPCookie.cookies(withResponseHeaderFields: ["set-cookie": header], for: url).first)
        #expect(cookie.domain == ".example.com")
        #expect(cookie.path == "/app")
        #expect(cookie.isSecure)
        #expect(cookie.isHTTPOnly)
        #expect(cookie.sameSitePolicy == "lax")
    }

    @Test func setCookieKeepsCommentAndCommentURL() throws {
        let header = "id=1; Version=1; Comment=\"why\"; CommentURL=\"https://a.example.com/c\""
        let cookie = try #require(HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": header], for: url).first)
        #expect((cookie.comment, cookie.commentURL) == ("why", URL(string: "https://a.example.com/c")))
    }

    @Test func setCookieKeepsVersionOne() throws {
        let header = "id=1; Version=1; Max-Age=100"
        let cookie = try #require(HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": header], for: url).first)
        #expect(cookie.version == 1)
    }

    @Test func setCookieVersionOneWithExpiresIsKept() throws {
        let header = "id=1; Version=1; Expires=Thursday, 01-Jan-37 00:00:00 GMT"
        let cookie = try #require(HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": header], for: url).first)
        #expect(!cookie.isSessionOnly)
    }

    @Test func setCookieDiscardMakesASessionCookie() throws {
        let header = "id=1; Max-Age=100; Discard"
        let cookie = try #require(HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": header], for: url).first)
        #expect(cookie.isSessionOnly)
    }

    @Test func setCookieKeepsPorts() throws {
        let header = "id=1; Version=1; Port=\"443,8443\""
        let cookie = try #require(HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": header], for: url).first)
        #expect(cookie.portList?.map(\.intValue) == [443, 8443])
    }

    @Test func ignoresOtherHeaderFields() {
        let cookies = HTTPCookie.cookies(withResponseHeaderFields: [
            "Content-Type": "text/html", "Cookie": "a=b",
        ], for: url)
        #expect(cookies.isEmpty)
    }

    @Test func splitsFoldedCookiesButNotExpiresDates() throws {
        let header = "a=1; Expires=Wed, 09 Jun 2021 10:18:14 GMT; Path=/, b=2, c=3; Expires=Thursday, 01-Jan-37 00:00:00 GMT"
        let cookies = HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": header], for: url)
        #expect(cookies.map(\.name) == ["a", "b", "c"])
        #expect(cookies.map(\.value) == ["1", "2", "3"])
        #expect(cookies[0].expiresDate == Date(timeIntervalSince1970: 1_623_233_894))
        #expect(cookies[0].path == "/")
        #expect(cookies[2].expiresDate == Date(timeIntervalSince1970: 2_114_380_800))
    }

    @Test func aCommaBeforeATextThatIsNoTokenStartsNoCookie() {
        let header = "next=/a,http://h/?q=1; Path=/"
        let cookies = HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": header], for: url)
        #expect(cookies.map(\.value) == ["/a,http://h/?q=1"])
    }

    @Test func aCommaBeforeAQuotedNameStartsNoCookie() {
        let header = "data={\"k\":1, \"j\"=2}; Path=/, b=2"
        let cookies = HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": header], for: url)
        #expect(cookies.map(\.name) == ["data", "b"])
    }

    @Test func keepsCommasInsideValues() {
        let cookies = HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": "list=a,b,c; Path=/"], for: url)
        #expect(cookies.map(\.value) == ["a,b,c"])
    }

    @Test(arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT",   // RFC 1123
        "Sunday, 06-Nov-94 08:49:37 GMT",  // RFC 850
        "Sun Nov  6 08:49:37 1994",        // asctime
        "Sun, 06-Nov-1994 08:49:37 GMT",   // common variant
    ])
    func parsesExpiresFormats(_ date: String) throws {
        let header = "x=y; Expires=\(date)"
        let cookie = try #require(HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": header], for: url).first)
        #expect(cookie.expiresDate == Date(timeIntervalSince1970: 784_111_777))
        #expect(!cookie.isSessionOnly)
    }

    @Test func dateParserRejectsNonsense() {
        #expect(SetCookieParser.parseDate("not a date") == nil)
        #expect(SetCookieParser.parseDate("Sun, 31 Feb 2021 08:49:37 GMT") == nil)
        #expect(SetCookieParser.parseDate("Sun, 06 Nov 1994 25:49:37 GMT") == nil)
        #expect(SetCookieParser.parseDate("Sun, 06 Nov 1500 08:49:37 GMT") == nil)
        // Two-digit years: 70-99 are 19xx, 00-69 are 20xx.
        #expect(SetCookieParser.parseDate("01 Jan 69 00:00:00") == Date(timeIntervalSince1970: 3_124_224_000))
        #expect(SetCookieParser.parseDate("01 Jan 70 00:00:00") == Date(timeIntervalSince1970: 0))
    }

    @Test func maxAgeWinsOverExpiresInHeaders() throws {
        let before = Date()
        let header = "x=y; Max-Age=60; Expires=Sun, 06 Nov 1994 08:49:37 GMT"
        let cookie = try #require(HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": header], for: url).first)
        let expires = try #require(cookie.expiresDate)
        #expect(expires.timeIntervalSince(before) >= 59)
        #expect(expires.timeIntervalSince(before) <= 61)
    }

    @Test func nonPositiveMaxAgeExpiresAtOnce() throws {
        let header = "x=y; Max-Age=0"
        let cookie = try #require(HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": header], for: url).first)
        #expect(cookie.isExpired())
        // An invalid Max-Age is ignored.
        let ignored = try #require(HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": "x=y; Max-Age=soon"], for: url).first)
        #expect(ignored.expiresDate == nil)
    }

    @Test func rejectsForeignDomains() {
        let foreign = HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": "x=y; Domain=evil.com"], for: url)
        #expect(foreign.isEmpty)
        let sibling = HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": "x=y; Domain=api.example.com"], for: url)
        #expect(sibling.isEmpty)
        let suffixOnly = HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": "x=y; Domain=ample.com"], for: url)
        #expect(suffixOnly.isEmpty)
        let topLevel = HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": "x=y; Domain=com"], for: url)
        #expect(topLevel.isEmpty)
        let ip = URL(string: "http://192.168.1.10/")!
        #expect(HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": "x=y; Domain=168.1.10"], for: ip).isEmpty)
        let sameIP = HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": "x=y; Domain=192.168.1.10"], for: ip)
        #expect(sameIP.map(\.domain) == ["192.168.1.10"])
    }

    @Test func acceptsParentDomain() throws {
        let cookie = try #require(
            HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": "x=y; Domain=example.com"], for: url).first)
        #expect(cookie.domain == ".example.com")
    }

    @Test func pathAttributeMustStartWithSlash() throws {
        let cookie = try #require(
            HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": "x=y; Path=relative"], for: url).first)
        #expect(cookie.path == "/docs/guide")
        #expect(SetCookieParser.defaultPath(for: URL(string: "http://a.com")!) == "/")
        #expect(SetCookieParser.defaultPath(for: URL(string: "http://a.com/file")!) == "/")
        #expect(SetCookieParser.defaultPath(for: URL(string: "http://a.com/dir/")!) == "/dir")
    }

    @Test func ignoresMalformedCookies() {
        for header in ["novalue", "=nameless", "", "bad\u{01}name=1", "name=bad\u{7F}value"] {
            #expect(HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": header], for: url).isEmpty)
        }
        let mixed = HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": "novalue; Path=/, ok=1"], for: url)
        #expect(mixed.map(\.name) == ["ok"])
    }

    @Test func trimsNamesAndValues() throws {
        let cookie = try #require(
            HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": "  key =  some value  ; path=/"], for: url).first)
        #expect(cookie.name == "key")
        #expect(cookie.value == "some value")
        #expect(cookie.path == "/")
    }
}
