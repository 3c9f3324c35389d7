import Foundation
import Testing
@testable import Courier

/// The Public Suffix List and the cookie domains it rules out (RFC 6265 section 5.3, step 5).
@Suite("Public suffixes and cookie domains")
struct PublicSuffixListTests {
    /// A small list in the publicsuffix.org format, with each kind of rule.
    static let sample = PublicSuffixList(text: """
        // ===BEGIN ICANN DOMAINS===
        com
        uk
        co.uk
        // a wildcard and its exception
        *.ck
        !www.ck
        github.io   trailing words are ignored
        """)

    @Test(arguments: [
        ("com", true), ("COM", true), ("co.uk", true), ("uk", true), ("github.io", true),
        ("example.com", false), ("example.co.uk", false), ("user.github.io", false),
        ("anything.ck", true), ("www.ck", false), ("a.b.ck", false),
        ("localhost", true), ("test", true), ("", true), ("example.com.", false),
    ])
    func rules(_ domain: String, _ isPublic: Bool) {
        #expect(Self.sample.isPublicSuffix(domain) == isPublic, "\(domain)")
    }

    @Test func withoutAListOnlyTheDefaultRuleApplies() {
        let none = PublicSuffixList(contentsOfFirstOf: ["/nonexistent/courier-public-suffixes.dat"])
        #expect(!none.isLoaded)
        #expect(none.isPublicSuffix("com"))
        #expect(!none.isPublicSuffix("co.uk"))
    }

    /// `scripts/setup` installs Debian's `publicsuffix`; the system list is the one cookies use.
    @Test func theSystemListIsRead() {
        #expect(PublicSuffixList.system.isLoaded)
        #expect(PublicSuffixList.system.isPublicSuffix("co.uk"))
        #expect(!PublicSuffixList.system.isPublicSuffix("bbc.co.uk"))
    }

    private func cookie(_ header: String, from url: String) throws -> HTTPCookie? {
        let url = try #require(URL(string: url))
        return HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": header], for: url).first
    }

    @Test func aPublicSuffixIsNoCookieDomain() throws {
        #expect(try cookie("id=1; Domain=co.uk", from: "https://www.example.co.uk/") == nil)
        #expect(try cookie("id=1; Domain=.co.uk", from: "https://www.example.co.uk/") == nil)
        #expect(try cookie("id=1; Domain=com", from: "https://shop.example.com/") == nil)
        let allowed = try #require(try cookie("id=1; Domain=example.co.uk", from: "https://www.example.co.uk/"))
        #expect(allowed.domain == ".example.co.uk")
    }

    @Test func aPublicSuffixHostGetsAHostOnlyCookie() throws {
        // A site served at a public suffix itself (github.io's own pages) may set a cookie for
        // itself alone, never for the names below it.
        let own = try #require(try cookie("id=1; Domain=github.io", from: "https://github.io/"))
        #expect(own.domain == "github.io")
        let storage = HTTPCookieStorage()
        storage.setCookie(own)
        #expect(storage.cookies(for: try #require(URL(string: "https://user.github.io/"))) ?? [] == [])
        #expect(storage.cookies(for: try #require(URL(string: "https://github.io/"))) ?? [] == [own])
    }
}
