import Foundation
import Testing
@testable import Courier

/// ``HTTPCookieStorage`` keeps browsers' limits (``CookieJarLimits``): oversized cookies are refused,
/// and beyond the per-domain and total counts the expired, then the oldest cookies are evicted.
@Suite("Cookie jar limits")
struct CookieJarLimitsTests {
    private func cookie(_ name: String, _ value: String = "v", domain: String = "example.com",
                        expires: Date? = nil) throws -> HTTPCookie {
        var properties: [HTTPCookiePropertyKey: Any] = [.name: name, .value: value, .domain: domain, .path: "/"]
        if let expires { properties[.expires] = expires }
        return try #require(HTTPCookie(properties: properties))
    }

    @Test func aCookieOver4096BytesIsRefused() throws {
        let storage = HTTPCookieStorage()
        storage.setCookie(try cookie("fits", String(repeating: "x", count: CookieJarLimits.maximumNameAndValueBytes - 4)))
        storage.setCookie(try cookie("huge", String(repeating: "x", count: CookieJarLimits.maximumNameAndValueBytes)))
        #expect(storage.cookies?.map(\.name) == ["fits"])
    }

    @Test func theOldestCookiesOfADomainAreEvictedPastItsLimit() throws {
        let storage = HTTPCookieStorage()
        storage.setCookie(try cookie("other", domain: "other.example"))
        for index in 0..<(CookieJarLimits.maximumCookiesPerDomain + 20) {
            storage.setCookie(try cookie("c\(index)", domain: index.isMultiple(of: 2) ? "example.com" : ".example.com"))
        }
        let names = (storage.cookies ?? []).filter { $0.domain != "other.example" }.map(\.name)
        #expect(names == (20..<(CookieJarLimits.maximumCookiesPerDomain + 20)).map { "c\($0)" })
    }

    @Test func expiredCookiesAreEvictedBeforeOlderLiveOnes() throws {
        let storage = HTTPCookieStorage()
        let soon = Date(timeIntervalSinceNow: 0.2)
        let limit = CookieJarLimits.maximumCookiesPerDomain
        storage.setCookie(try cookie("first"))
        storage.setCookie(try cookie("expiring", expires: soon))
        Thread.sleep(until: soon.addingTimeInterval(0.05))
        // One past the limit: the expired cookie goes, not the older "first"; one more: "first" goes.
        for index in 0..<(limit - 1) { storage.setCookie(try cookie("c\(index)")) }
        let afterExpired = (storage.cookies ?? []).map(\.name)
        storage.setCookie(try cookie("last"))
        let afterOldest = (storage.cookies ?? []).map(\.name)
        #expect(afterExpired == ["first"] + (0..<(limit - 1)).map { "c\($0)" }
                && afterOldest == (0..<(limit - 1)).map { "c\($0)" } + ["last"])
    }

    @Test func theOldestCookiesAreEvictedPastTheTotalLimit() throws {
        let storage = HTTPCookieStorage()
        let total = CookieJarLimits.maximumCookies + 10
        for index in 0..<total { storage.setCookie(try cookie("c\(index)", domain: "d\(index / 100).example")) }
        let names = (storage.cookies ?? []).map(\.name)
        #expect(names == (10..<total).map { "c\($0)" })
    }

    @Test func aStoreFileOverTheLimitsIsTrimmedWhenRead() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-jar-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("Cookies.json")
        let expires = Date(timeIntervalSinceNow: 3600)
        var stored = try (0..<(CookieJarLimits.maximumCookiesPerDomain + 5)).map { index in
            CookieStoreFile.Stored(cookie: try cookie("c\(index)", expires: expires), storedAt: Date())
        }
        stored.append(.init(cookie: try cookie("huge", String(repeating: "x", count: 5000), domain: "other.example", expires: expires),
                            storedAt: Date()))
        try #require(CookieStoreFile.encode(stored)).write(to: file)
        let storage = HTTPCookieStorage(fileURL: file)
        let names = (storage.cookies ?? []).map(\.name)
        #expect(names == (5..<(CookieJarLimits.maximumCookiesPerDomain + 5)).map { "c\($0)" })
    }
}
