import Foundation
import Testing
@testable import Courier

/// The caching rules on their own: `Cache-Control` parsing, freshness and age, the handler's
/// decision, 304 merging, storability and `Vary` matching.
@Suite("HTTP cache rules")
struct HTTPCacheRuleTests {
    private static let now = Date(timeIntervalSince1970: 1_700_000_000)

    private func response(_ headers: [String: String], status: Int = 200) throws -> HTTPURLResponse {
        let url = try #require(URL(string: "http://127.0.0.1/r"))
        return try #require(HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers))
    }

    private func date(_ offset: TimeInterval) -> String {
        CacheTestServer.httpDate(Self.now.addingTimeInterval(offset))
    }

    private func request(_ headers: [String: String] = [:], policy: URLRequest.CachePolicy = .useProtocolCachePolicy) throws -> URLRequest {
        CacheTest.request(try #require(URL(string: "http://127.0.0.1/r")), policy: policy, headers: headers)
    }

    // MARK: Cache-Control

    @Test func parsesDirectives() {
        let control = HTTPCacheControl("Max-Age=60, NO-CACHE, must-revalidate, private=\"a, b\", s-maxage=5, immutable")
        #expect(control.maxAge == 60)
        #expect(control.noCache)
        #expect(control.mustRevalidate)
        #expect(control.sharedMaxAge == 5)
        #expect(control.immutable)
        #expect(!control.noStore)
        #expect(HTTPCacheControl("max-age=\"30\"").maxAge == 30)
        #expect(HTTPCacheControl("max-age=soon").maxAge == 0, "an invalid max-age means stale")
        #expect(HTTPCacheControl("max-age=99999999999999999999").maxAge == 2_147_483_648)
        #expect(HTTPCacheControl("max-stale").maxStale == .infinity)
        #expect(HTTPCacheControl("max-stale=10, min-fresh=3").maxStale == 10)
        #expect(HTTPCacheControl("no-store").noStore)
        #expect(HTTPCacheControl(nil) == HTTPCacheControl())
    }

    @Test func pragmaNoCacheCountsOnlyWithoutCacheControl() throws {
        #expect(HTTPCacheControl(request: try request(["Pragma": "no-cache"])).noCache)
        #expect(!HTTPCacheControl(request: try request(["Pragma": "no-cache", "Cache-Control": "max-age=5"])).noCache)
    }

    // MARK: Freshness

    @Test func maxAgeGivesTheLifetimeAndSharedMaxAgeIsIgnored() throws {
        let freshness = HTTPCacheFreshness(response: try response(["Cache-Control": "max-age=100, s-maxage=1000", "Date": date(0)]),
                                           receivedAt: Self.now, now: Self.now.addingTimeInterval(30))
        #expect(freshness.lifetime == 100)
        #expect(freshness.currentAge == 30)
        #expect(freshness.isFresh)
        #expect(!freshness.isHeuristic)
        let later = HTTPCacheFreshness(response: try response(["Cache-Control": "max-age=100", "Date": date(0)]),
                                       receivedAt: Self.now, now: Self.now.addingTimeInterval(150))
        #expect(!later.isFresh)
        #expect(later.staleness == 50)
    }

    @Test func maxAgeWinsOverExpires() throws {
        let freshness = HTTPCacheFreshness(response: try response(["Cache-Control": "max-age=10", "Expires": date(1000), "Date": date(0)]),
                                           receivedAt: Self.now, now: Self.now)
        #expect(freshness.lifetime == 10)
    }

    @Test func expiresMinusDate() throws {
        let freshness = HTTPCacheFreshness(response: try response(["Expires": date(300), "Date": date(0)]),
                                           receivedAt: Self.now, now: Self.now)
        #expect(freshness.lifetime == 300)
        let invalid = HTTPCacheFreshness(response: try response(["Expires": "0", "Date": date(0)]),
                                         receivedAt: Self.now, now: Self.now)
        #expect(invalid.lifetime == 0)
        #expect(!invalid.isFresh)
    }

    @Test func heuristicLifetimeIsATenthOfTheAgeSinceModificationCapped() throws {
        let recent = HTTPCacheFreshness(response: try response(["Last-Modified": date(-1000), "Date": date(0)]),
                                        receivedAt: Self.now, now: Self.now)
        #expect(recent.lifetime == 100)
        #expect(recent.isHeuristic)
        let old = HTTPCacheFreshness(response: try response(["Last-Modified": date(-100 * 86_400), "Date": date(0)]),
                                     receivedAt: Self.now, now: Self.now)
        #expect(old.lifetime == HTTPCacheFreshness.heuristicLimit)
        let uncacheableStatus = HTTPCacheFreshness(response: try response(["Last-Modified": date(-1000), "Date": date(0)], status: 500),
                                                   receivedAt: Self.now, now: Self.now)
        #expect(uncacheableStatus.lifetime == 0)
        let nothing = HTTPCacheFreshness(response: try response(["Date": date(0)]), receivedAt: Self.now, now: Self.now)
        #expect(nothing.lifetime == 0)
    }

    @Test func ageAddsTheAgeHeaderOrApparentAgeToTheResidentTime() throws {
        // Age header larger than the apparent age.
        let aged = HTTPCacheFreshness(response: try response(["Cache-Control": "max-age=100", "Age": "40", "Date": date(0)]),
                                      receivedAt: Self.now.addingTimeInterval(5), now: Self.now.addingTimeInterval(15))
        #expect(aged.currentAge == 50)
        // Apparent age (arrival − Date) larger than Age.
        let delayed = HTTPCacheFreshness(response: try response(["Cache-Control": "max-age=100", "Age": "2", "Date": date(0)]),
                                         receivedAt: Self.now.addingTimeInterval(20), now: Self.now.addingTimeInterval(30))
        #expect(delayed.currentAge == 30)
        // Unknown arrival: the Date header stands for it.
        let unknown = HTTPCacheFreshness(response: try response(["Cache-Control": "max-age=100", "Date": date(0)]),
                                         receivedAt: nil, now: Self.now.addingTimeInterval(70))
        #expect(unknown.currentAge == 70)
        // An Age that is not a number is ignored.
        let garbage = HTTPCacheFreshness(response: try response(["Cache-Control": "max-age=100", "Age": "old", "Date": date(0)]),
                                         receivedAt: Self.now, now: Self.now)
        #expect(garbage.currentAge == 0)
    }

    // MARK: The handler's decision

    private func cached(_ headers: [String: String]) throws -> CachedURLResponse {
        CachedURLResponse(response: try response(headers), data: Data("body".utf8))
    }

    @Test func freshResponsesAreUsedAndStaleOnesRevalidatedOrReloaded() throws {
        let fresh = try cached(["Cache-Control": "max-age=60", "Date": date(0), "ETag": "\"t\""])
        #expect(HTTPCacheValidation.decide(cached: fresh, request: try request(), receivedAt: Self.now, now: Self.now) == .useStored)

        let later = Self.now.addingTimeInterval(120)
        #expect(HTTPCacheValidation.decide(cached: fresh, request: try request(), receivedAt: Self.now, now: later)
                == .revalidate([HTTPCacheConditionalHeader(name: "If-None-Match", value: "\"t\"")]))

        let both = try cached(["Cache-Control": "max-age=0", "Date": date(0), "ETag": "W/\"w\"", "Last-Modified": date(-50)])
        #expect(HTTPCacheValidation.decide(cached: both, request: try request(), receivedAt: Self.now, now: Self.now)
                == .revalidate([HTTPCacheConditionalHeader(name: "If-None-Match", value: "W/\"w\""),
                                HTTPCacheConditionalHeader(name: "If-Modified-Since", value: date(-50))]))

        let noValidator = try cached(["Cache-Control": "max-age=0", "Date": date(0)])
        #expect(HTTPCacheValidation.decide(cached: noValidator, request: try request(), receivedAt: Self.now, now: Self.now) == .load)
    }

    @Test func noCacheAndReloadRevalidatingAlwaysRevalidate() throws {
        let revalidate = HTTPCacheValidation.revalidate([HTTPCacheConditionalHeader(name: "If-None-Match", value: "\"t\"")])
        let fresh = try cached(["Cache-Control": "max-age=60", "Date": date(0), "ETag": "\"t\""])
        #expect(HTTPCacheValidation.decide(cached: fresh, request: try request(policy: .reloadRevalidatingCacheData),
                                           receivedAt: Self.now, now: Self.now) == revalidate)
        #expect(HTTPCacheValidation.decide(cached: fresh, request: try request(["Cache-Control": "no-cache"]),
                                           receivedAt: Self.now, now: Self.now) == revalidate)
        #expect(HTTPCacheValidation.decide(cached: fresh, request: try request(["Pragma": "no-cache"]),
                                           receivedAt: Self.now, now: Self.now) == revalidate)
        let responseNoCache = try cached(["Cache-Control": "no-cache, max-age=60", "Date": date(0), "ETag": "\"t\""])
        #expect(HTTPCacheValidation.decide(cached: responseNoCache, request: try request(), receivedAt: Self.now, now: Self.now) == revalidate)
    }

    @Test func requestDirectivesAdjustWhatIsAcceptable() throws {
        let response = try cached(["Cache-Control": "max-age=60", "Date": date(0), "ETag": "\"t\""])
        let at30 = Self.now.addingTimeInterval(30)
        func decide(_ headers: [String: String], _ time: Date) throws -> HTTPCacheValidation {
            HTTPCacheValidation.decide(cached: response, request: try request(headers), receivedAt: Self.now, now: time)
        }
        #expect(try decide(["Cache-Control": "max-age=10"], at30) != .useStored)
        #expect(try decide(["Cache-Control": "max-age=40"], at30) == .useStored)
        #expect(try decide(["Cache-Control": "min-fresh=40"], at30) != .useStored)
        #expect(try decide(["Cache-Control": "min-fresh=20"], at30) == .useStored)
        let at90 = Self.now.addingTimeInterval(90)
        #expect(try decide(["Cache-Control": "max-stale=60"], at90) == .useStored)
        #expect(try decide(["Cache-Control": "max-stale=10"], at90) != .useStored)
        #expect(try decide(["Cache-Control": "max-stale"], at90) == .useStored)

        let mustRevalidate = try cached(["Cache-Control": "max-age=60, must-revalidate", "Date": date(0), "ETag": "\"t\""])
        #expect(HTTPCacheValidation.decide(cached: mustRevalidate, request: try request(["Cache-Control": "max-stale"]),
                                           receivedAt: Self.now, now: at90) != .useStored)
    }

    @Test func callersOwnConditionsBypassTheCache() throws {
        let fresh = try cached(["Cache-Control": "max-age=60", "Date": date(0), "ETag": "\"t\""])
        for header in HTTPCacheValidation.callerConditionHeaders {
            #expect(HTTPCacheValidation.decide(cached: fresh, request: try request([header: "x"]), receivedAt: Self.now, now: Self.now)
                    == .load, "\(header)")
        }
    }

    @Test func notModifiedRefreshesHeadersButKeepsBodyAndFraming() throws {
        let stored = CachedURLResponse(response: try response(["ETag": "\"t\"", "Content-Length": "4", "Content-Encoding": "gzip",
                                                               "Cache-Control": "max-age=0", "X-Old": "1"]),
                                       data: Data("body".utf8), userInfo: ["k": "v"], storagePolicy: .allowedInMemoryOnly)
        let notModified = try response(["Cache-Control": "max-age=60", "Content-Length": "0", "Content-Encoding": "br",
                                        "X-New": "2"], status: 304)
        let refreshed = try #require(HTTPCacheValidation.refreshed(stored, with: notModified))
        let http = try #require(refreshed.response as? HTTPURLResponse)
        #expect(http.statusCode == 200)
        #expect(http.value(forHTTPHeaderField: "Cache-Control") == "max-age=60")
        #expect(http.value(forHTTPHeaderField: "X-New") == "2")
        #expect(http.value(forHTTPHeaderField: "X-Old") == "1")
        #expect(http.value(forHTTPHeaderField: "Content-Length") == "4")
        #expect(http.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
        #expect(refreshed.data == Data("body".utf8))
        #expect(refreshed.storagePolicy == .allowedInMemoryOnly)
        #expect(refreshed.userInfo?["k"] as? String == "v")
    }

    // MARK: Storability

    @Test func storagePolicyFollowsStatusMethodAndDirectives() throws {
        for status in [200, 203, 204, 300, 301, 404, 405, 410, 414, 501] {
            #expect(HTTPCacheStorage.policy(for: try response([:], status: status), request: try request()) == .allowed, "\(status)")
        }
        for status in [201, 206, 302, 304, 307, 400, 403, 500, 503] {
            #expect(HTTPCacheStorage.policy(for: try response([:], status: status), request: try request()) == .notAllowed, "\(status)")
        }
        var post = try request()
        post.httpMethod = "POST"
        #expect(HTTPCacheStorage.policy(for: try response([:]), request: post) == .notAllowed)
        #expect(HTTPCacheStorage.policy(for: try response(["Cache-Control": "no-store"]), request: try request()) == .notAllowed)
        #expect(HTTPCacheStorage.policy(for: try response([:]), request: try request(["Cache-Control": "no-store"])) == .notAllowed)
        #expect(HTTPCacheStorage.policy(for: try response(["Vary": "Accept, *"]), request: try request()) == .notAllowed)
        #expect(HTTPCacheStorage.policy(for: try response(["Cache-Control": "private"]), request: try request()) == .allowed)
        #expect(HTTPCacheStorage.policy(for: try response([:]), request: try request(["Range": "bytes=0-1"])) == .notAllowed)
    }

    @Test func unsafeMethodsInvalidate() throws {
        var post = try request()
        post.httpMethod = "DELETE"
        #expect(HTTPCacheStorage.invalidatesStoredResponse(try response([:]), request: post))
        #expect(!HTTPCacheStorage.invalidatesStoredResponse(try response([:], status: 500), request: post))
        #expect(!HTTPCacheStorage.invalidatesStoredResponse(try response([:]), request: try request()))
    }

    // MARK: Vary

    @Test func varyComparesTheNamedRequestHeaders() throws {
        let varying = try response(["Vary": "Accept-Language, accept-encoding"])
        let stored = URLCacheVary(response: varying, request: try request(["Accept-Language": " en "]))
        #expect(stored?.values == ["accept-language": "en"])
        #expect(URLCacheVary.request(try request(["Accept-Language": "en"]), matches: stored, for: varying))
        #expect(!URLCacheVary.request(try request(["Accept-Language": "fr"]), matches: stored, for: varying))
        #expect(!URLCacheVary.request(try request(["Accept-Language": "en", "Accept-Encoding": "gzip"]), matches: stored, for: varying))
        #expect(!URLCacheVary.request(try request(), matches: stored, for: varying))
        #expect(URLCacheVary.request(try request(["Accept-Language": "fr"]), matches: nil, for: try response([:])))
        #expect(!URLCacheVary.request(try request(), matches: nil, for: try response(["Vary": "*"])))
        #expect(URLCacheVary(response: try response([:]), request: try request()) == nil)
    }

    @Test func cacheKeepsVaryValuesOnDisk() throws {
        let store = CacheTest.store(memory: 0)
        defer { store.remove() }
        let varying = try response(["Vary": "Accept-Language", "Cache-Control": "max-age=60"])
        store.cache.storeCachedResponse(CachedURLResponse(response: varying, data: Data("en".utf8)),
                                        for: try request(["Accept-Language": "en"]))
        let reader = URLCache(memoryCapacity: 0, diskCapacity: 1 << 20, diskPath: store.directory.path)
        #expect(reader.cachedResponse(for: try request(["Accept-Language": "en"]))?.data == Data("en".utf8))
        #expect(reader.cachedResponse(for: try request(["Accept-Language": "de"])) == nil)
    }
}
