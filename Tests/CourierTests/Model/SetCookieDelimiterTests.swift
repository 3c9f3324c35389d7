import Foundation
import Testing
@testable import Courier

/// Found by the set-cookie fuzzer: a combining mark right after `=` or `;` fused with it into one
/// Character, so `n=\u{5A4}x` had no `=` (the cookie was refused, though `n= \u{5A4}x` was accepted
/// with the same value) and `;\u{301}` did not end the value. Delimiters are found among scalars.
@Suite("Set-Cookie delimiters followed by combining marks")
struct SetCookieDelimiterTests {
    private let url = URL(string: "http://localhost/dir/page")!

    @Test func aCombiningMarkAfterTheEqualsSign() throws {
        let spaced = try #require(SetCookieParser.cookie(fromSetCookie: "n= \u{5A4}uotue\"; SameSite=2d", for: url))
        #expect(spaced.value == "\u{5A4}uotue\"")
        let written = "\(spaced.name)=\(spaced.value); Path=\(spaced.path)"
        let again = try #require(SetCookieParser.cookie(fromSetCookie: written, for: url))
        #expect(again.name == "n" && again.value == spaced.value && again.path == spaced.path)
        let fromHeader = HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": "n=\u{5A4}x; Path=/p"], for: url)
        #expect(fromHeader.map(\.value) == ["\u{5A4}x"])
        #expect(fromHeader.map(\.path) == ["/p"])
    }

    @Test func aCombiningMarkAfterTheSemicolon() throws {
        let cookie = try #require(SetCookieParser.cookie(fromSetCookie: "sid=abc;\u{301}Secure; Path=/a", for: url))
        #expect(cookie.value == "abc")
        #expect(cookie.path == "/a")
    }
}
