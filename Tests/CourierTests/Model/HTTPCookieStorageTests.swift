import Foundation
import Synchronization
import Testing
@testable import Courier

@Suite("HTTPCookieStorage")
struct HTTPCookieStorageTests {

    private func cookie(_ name: String, _ value: String = "v", domain: String = "example.com", path: String = "/",
                        secure: Bool = false, expires: Date? = nil) throws -> HTTPCookie {
        var properties: [HTTPCookiePropertyKey: Any] = [.name: name, .value: value, .domain: domain, .path: path]
        if secure { properties[.secure] = "TRUE" }
        if let expires { properties[.expires] = expires }
        return try #require(HTTPCookie(properties: properties))
    }

    @Test func replacesCookieWithSameNameDomainAndPath() throws {
        let storage = HTTPCookieStorage()
        storage.setCookie(try cookie("a", "1"))
        storage.setCookie(try cookie("a", "2"))
        storage.setCookie(try cookie("a", "3", path: "/other"))
        storage.setCookie(try cookie("a", "4", domain: "other.com"))
        let cookies = storage.cookies ?? []
        #expect(cookies.count == 3)
        #expect(cookies.filter { $0.domain == "example.com" && $0.path == "/" }.map(\.value) == ["2"])
    }

    @Test func expiredCookieDeletesItsTwin() throws {
        let storage = HTTPCookieStorage()
        storage.setCookie(try cookie("a", "1"))
        storage.setCookie(try cookie("a", "gone", expires: Date(timeIntervalSinceNow: -10)))
        #expect(storage.cookies?.isEmpty == true)
    }

    @Test func deleteAndRemoveSince() throws {
        let storage = HTTPCookieStorage()
        storage.setCookie(try cookie("old"))
        Thread.sleep(forTimeInterval: 0.01)
        let cutoff = Date()
        Thread.sleep(forTimeInterval: 0.01)
        storage.setCookie(try cookie("new"))
        storage.setCookie(try cookie("newer"))
        storage.deleteCookie(try cookie("newer", "different value"))
        #expect(storage.cookies?.map(\.name).sorted() == ["new", "old"])
        storage.removeCookies(since: cutoff)
        #expect(storage.cookies?.map(\.name) == ["old"])
    }

    @Test func matchesDomains() throws {
        let storage = HTTPCookieStorage()
        storage.setCookie(try cookie("hostOnly", domain: "example.com"))
        storage.setCookie(try cookie("wide", domain: ".example.com"))
        storage.setCookie(try cookie("elsewhere", domain: "example.org"))

        let apex = storage.cookies(for: URL(string: "http://example.com/")!) ?? []
        #expect(Set(apex.map(\.name)) == ["hostOnly", "wide"])
        let sub = storage.cookies(for: URL(string: "http://www.EXAMPLE.com/")!) ?? []
        #expect(sub.map(\.name) == ["wide"])
        let lookalike = storage.cookies(for: URL(string: "http://badexample.com/")!) ?? []
        #expect(lookalike.isEmpty)
        #expect(storage.cookies(for: URL(string: "file:///tmp/x")!) == nil)
    }

    @Test func matchesPathsAndSortsLongestFirst() throws {
        let storage = HTTPCookieStorage()
        storage.setCookie(try cookie("root", path: "/"))
        storage.setCookie(try cookie("docs", path: "/docs"))
        storage.setCookie(try cookie("deep", path: "/docs/api/"))
        storage.setCookie(try cookie("other", path: "/doc"))

        let names = storage.cookies(for: URL(string: "http://example.com/docs/api/index.html")!)?.map(\.name)
        #expect(names == ["deep", "docs", "root"])
        // "/docs" does not path-match "/docsearch", and "/doc" does not match "/docs".
        let search = storage.cookies(for: URL(string: "http://example.com/docsearch")!)?.map(\.name)
        #expect(search == ["root"])
        let exact = storage.cookies(for: URL(string: "http://example.com/docs")!)?.map(\.name)
        #expect(exact == ["docs", "root"])
    }

    @Test func secureCookiesOnlyForHTTPS() throws {
        let storage = HTTPCookieStorage()
        storage.setCookie(try cookie("secret", secure: true))
        storage.setCookie(try cookie("plain"))
        #expect(storage.cookies(for: URL(string: "http://example.com/")!)?.map(\.name) == ["plain"])
        #expect(Set(storage.cookies(for: URL(string: "https://example.com/")!)?.map(\.name) ?? []) == ["secret", "plain"])
    }

    @Test func expiredCookiesAreNotReturned() throws {
        let storage = HTTPCookieStorage()
        storage.setCookie(try cookie("brief", expires: Date(timeIntervalSinceNow: 0.05)))
        storage.setCookie(try cookie("lasting", expires: Date(timeIntervalSinceNow: 3600)))
        Thread.sleep(forTimeInterval: 0.1)
        #expect(storage.cookies(for: URL(string: "http://example.com/")!)?.map(\.name) == ["lasting"])
        #expect(storage.cookies?.map(\.name) == ["lasting"])
    }

    @Test func setCookiesForURLUsesOnlyMatchingCookies() throws {
        let storage = HTTPCookieStorage()
        let url = URL(string: "https://www.example.com/")!
        let parsed = HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": "a=1; Domain=example.com, b=2"], for: url)
        storage.setCookies(parsed + [try cookie("foreign", domain: "other.com")], for: url, mainDocumentURL: nil)
        #expect(Set(storage.cookies?.map(\.name) ?? []) == ["a", "b"])
    }

    @Test func acceptPolicyNever() throws {
        let storage = HTTPCookieStorage()
        storage.cookieAcceptPolicy = .never
        #expect(storage.cookieAcceptPolicy == .never)
        storage.setCookie(try cookie("a"))
        storage.setCookies([try cookie("b")], for: URL(string: "http://example.com/")!, mainDocumentURL: nil)
        #expect(storage.cookies?.isEmpty == true)
    }

    @Test func acceptPolicyOnlyFromMainDocumentDomain() throws {
        let storage = HTTPCookieStorage()
        storage.cookieAcceptPolicy = .onlyFromMainDocumentDomain
        let url = URL(string: "http://ads.tracker.net/pixel")!
        storage.setCookies([try cookie("third", domain: "ads.tracker.net")], for: url,
                           mainDocumentURL: URL(string: "http://example.com/")!)
        #expect(storage.cookies?.isEmpty == true)

        let first = URL(string: "http://www.example.com/")!
        storage.setCookies([try cookie("first", domain: ".example.com")], for: first,
                           mainDocumentURL: URL(string: "http://example.com/")!)
        #expect(storage.cookies?.map(\.name) == ["first"])
    }

    @Test func sortsWithKeyPathDescriptors() throws {
        let storage = HTTPCookieStorage()
        storage.setCookie(try cookie("b", domain: "b.com"))
        storage.setCookie(try cookie("a", domain: "c.com"))
        storage.setCookie(try cookie("c", domain: "a.com"))
        let byName = storage.sortedCookies(using: [NSSortDescriptor(keyPath: \HTTPCookie.name, ascending: true)])
        #expect(byName.map(\.name) == ["a", "b", "c"])
        let byDomain = storage.sortedCookies(using: [NSSortDescriptor(keyPath: \HTTPCookie.domain, ascending: false)])
        #expect(byDomain.map(\.domain) == ["c.com", "b.com", "a.com"])
        let byVersion = storage.sortedCookies(using: [NSSortDescriptor(keyPath: \HTTPCookie.version, ascending: true),
                                                      NSSortDescriptor(keyPath: \HTTPCookie.name, ascending: false)])
        #expect(byVersion.map(\.name) == ["c", "b", "a"])
        // A descriptor for another type is skipped instead of crashing.
        let foreign = storage.sortedCookies(using: [NSSortDescriptor(keyPath: \URLProtectionSpace.port, ascending: true)])
        #expect(foreign.count == 3)
    }

    @Test func postsChangeNotifications() throws {
        let storage = HTTPCookieStorage()
        let count = Mutex(0)
        let observer = NotificationCenter.default.addObserver(
            forName: .NSHTTPCookieManagerCookiesChanged, object: storage, queue: nil
        ) { _ in
            count.withLock { $0 += 1 }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        storage.setCookie(try cookie("a"))
        storage.deleteCookie(try cookie("a"))
        storage.deleteCookie(try cookie("a")) // nothing left to delete: no notification
        #expect(count.withLock { $0 } == 2)
    }

    @Test func sharedAndGroupStorages() throws {
        #expect(HTTPCookieStorage.shared === HTTPCookieStorage.shared)
        let group = HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: "group.test.courier")
        #expect(group === HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: "group.test.courier"))
        #expect(group !== HTTPCookieStorage.shared)
        #expect(group !== HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: "group.other"))
    }
}
