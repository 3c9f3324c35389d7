import Foundation
import Testing
@testable import Courier

/// HTTP caching end to end against ``CacheTestServer`` on 127.0.0.1: freshness, revalidation with
/// `ETag` and `Last-Modified`, `no-store`, every request cache policy, `willCacheResponse`, storage
/// policies and `Vary`. Each test uses its own `URLCache` in a temporary directory.
@Suite("HTTP cache")
struct HTTPCacheTests {

    /// A response that stays fresh for a minute.
    private static let fresh: [(String, String)] = [("Cache-Control", "max-age=60")]

    // MARK: Freshness

    @Test func freshResponseIsServedWithoutARequest() async throws {
        let server = try CacheTestServer { _, count in
            .ok("v\(count)", [CacheTestServer.dateHeader] + Self.fresh)
        }
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        let delegate = CacheTestDelegate()
        let session = CacheTest.session(cache: store.cache, delegate: delegate)
        defer { session.finishTasksAndInvalidate() }

        let first = session.dataTask(with: server.url("/fresh"))
        try await delegate.run(first)
        let second = session.dataTask(with: server.url("/fresh"))
        try await delegate.run(second)

        #expect(delegate.body(of: first) == "v1")
        #expect(delegate.body(of: second) == "v1")
        #expect(server.count("/fresh") == 1)
        #expect((second.response as? HTTPURLResponse)?.statusCode == 200)
        #expect(delegate.metrics(of: first)?.transactionMetrics.last?.resourceFetchType == .networkLoad)
        #expect(delegate.metrics(of: second)?.transactionMetrics.last?.resourceFetchType == .localCache)
        // A hit is not offered for caching again.
        #expect(delegate.events(of: second) == ["response", "data", "metrics", "complete"])
    }

    @Test func heuristicFreshnessFromLastModified() async throws {
        let modified = CacheTestServer.httpDate(Date().addingTimeInterval(-10 * 86_400))
        let server = try CacheTestServer { _, count in
            .ok("v\(count)", [CacheTestServer.dateHeader, ("Last-Modified", modified)])
        }
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        let session = CacheTest.session(cache: store.cache)
        defer { session.finishTasksAndInvalidate() }

        _ = try await session.loadData(server.url("/heuristic"))
        let second = try await session.loadData(server.url("/heuristic"))
        #expect(CacheTest.text(second) == "v1")
        #expect(server.count("/heuristic") == 1)
    }

    @Test func expiredResponseWithoutValidatorsIsLoadedAgain() async throws {
        let server = try CacheTestServer { _, count in
            .ok("v\(count)", [CacheTestServer.dateHeader, ("Expires", CacheTestServer.httpDate(Date().addingTimeInterval(-60)))])
        }
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        let session = CacheTest.session(cache: store.cache)
        defer { session.finishTasksAndInvalidate() }

        _ = try await session.loadData(server.url("/expired"))
        let second = try await session.loadData(server.url("/expired"))
        #expect(CacheTest.text(second) == "v2")
        #expect(server.count("/expired") == 2)
        #expect(server.requests("/expired").last?.header("If-None-Match") == nil)
        #expect(server.requests("/expired").last?.header("If-Modified-Since") == nil)
    }

    // MARK: Revalidation

    @Test func staleResponseWithETagIsRevalidatedAnd304YieldsTheCachedBody() async throws {
        let server = try CacheTestServer { request, _ in
            if request.header("If-None-Match") == "\"tag1\"" {
                return .notModified([CacheTestServer.dateHeader, ("ETag", "\"tag1\""), ("Cache-Control", "max-age=60"),
                                     ("X-Revalidated", "yes")])
            }
            return .ok("payload", [CacheTestServer.dateHeader, ("ETag", "\"tag1\""), ("Cache-Control", "max-age=0")])
        }
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        let session = CacheTest.session(cache: store.cache)
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/etag")

        let first = try await session.loadData(url)
        #expect(CacheTest.text(first) == "payload")
        let second = try await session.loadData(url)
        #expect(second.error == nil)
        #expect(CacheTest.text(second) == "payload")
        let response = try #require(second.response as? HTTPURLResponse)
        #expect(response.statusCode == 200)
        #expect(response.value(forHTTPHeaderField: "X-Revalidated") == "yes")
        #expect(response.value(forHTTPHeaderField: "Content-Length") == "7")
        #expect(server.count("/etag") == 2)
        #expect(server.requests("/etag").last?.header("If-None-Match") == "\"tag1\"")

        // The 304 refreshed the stored headers (max-age=60): the next use needs no request.
        let third = try await session.loadData(url)
        #expect(CacheTest.text(third) == "payload")
        #expect(server.count("/etag") == 2)
        let stored = try #require(store.cache.cachedResponse(for: URLRequest(url: url))?.response as? HTTPURLResponse)
        #expect(stored.value(forHTTPHeaderField: "X-Revalidated") == "yes")
    }

    @Test func lastModifiedIsRevalidatedWithIfModifiedSince() async throws {
        let modified = CacheTestServer.httpDate(Date().addingTimeInterval(-3600))
        let server = try CacheTestServer { request, count in
            if request.header("If-Modified-Since") == modified {
                return .notModified([CacheTestServer.dateHeader])
            }
            return .ok("v\(count)", [CacheTestServer.dateHeader, ("Last-Modified", modified), ("Cache-Control", "no-cache")])
        }
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        let session = CacheTest.session(cache: store.cache)
        defer { session.finishTasksAndInvalidate() }

        _ = try await session.loadData(server.url("/modified"))
        let second = try await session.loadData(server.url("/modified"))
        let third = try await session.loadData(server.url("/modified"))
        #expect(CacheTest.text(second) == "v1")
        #expect(CacheTest.text(third) == "v1")
        // no-cache: every use asks the server.
        #expect(server.count("/modified") == 3)
        #expect(server.requests("/modified").dropFirst().allSatisfy { $0.header("If-Modified-Since") == modified })
    }

    @Test func changedResourceReplacesTheStoredResponse() async throws {
        let server = try CacheTestServer { request, count in
            if count >= 3, request.header("If-None-Match") == "\"v2\"" {
                return .notModified([CacheTestServer.dateHeader, ("ETag", "\"v2\"")])
            }
            return .ok("body\(count)", [CacheTestServer.dateHeader, ("ETag", "\"v\(count)\""), ("Cache-Control", "max-age=0")])
        }
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        let session = CacheTest.session(cache: store.cache)
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/changing")

        #expect(CacheTest.text(try await session.loadData(url)) == "body1")
        // The server ignores the stale tag and sends a new version, which is stored.
        #expect(CacheTest.text(try await session.loadData(url)) == "body2")
        #expect(server.requests(url.path).last?.header("If-None-Match") == "\"v1\"")
        // The new version's tag is what is asked about next, and the 304 yields it.
        #expect(CacheTest.text(try await session.loadData(url)) == "body2")
        #expect(server.requests(url.path).last?.header("If-None-Match") == "\"v2\"")
        #expect(server.count(url.path) == 3)
    }

    @Test func requestNoCacheRevalidatesAFreshResponse() async throws {
        let server = try CacheTestServer { request, count in
            if request.header("If-None-Match") == "\"a\"" { return .notModified([CacheTestServer.dateHeader]) }
            return .ok("v\(count)", [CacheTestServer.dateHeader, ("ETag", "\"a\"")] + Self.fresh)
        }
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        let session = CacheTest.session(cache: store.cache)
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/no-cache-request")

        _ = try await session.loadData(url)
        let second = try await session.loadData(CacheTest.request(url, headers: ["Cache-Control": "no-cache"]))
        #expect(CacheTest.text(second) == "v1")
        #expect(server.count(url.path) == 2)
        #expect(server.requests(url.path).last?.header("If-None-Match") == "\"a\"")
    }

    // MARK: What is stored

    @Test func noStoreIsNotCached() async throws {
        let server = try CacheTestServer { _, count in
            .ok("v\(count)", [CacheTestServer.dateHeader, ("Cache-Control", "no-store, max-age=60"), ("ETag", "\"x\"")])
        }
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        let delegate = CacheTestDelegate()
        let session = CacheTest.session(cache: store.cache, delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/no-store")

        let first = session.dataTask(with: url)
        try await delegate.run(first)
        let second = session.dataTask(with: url)
        try await delegate.run(second)
        #expect(delegate.body(of: second) == "v2")
        #expect(server.count(url.path) == 2)
        #expect(server.requests(url.path).last?.header("If-None-Match") == nil)
        #expect(store.cache.cachedResponse(for: URLRequest(url: url)) == nil)
        #expect(delegate.events(of: first) == ["response", "data", "metrics", "complete"], "willCacheResponse is not asked")
    }

    @Test func requestNoStoreIsNotCached() async throws {
        let server = try CacheTestServer { _, count in .ok("v\(count)", [CacheTestServer.dateHeader] + Self.fresh) }
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        let session = CacheTest.session(cache: store.cache)
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/request-no-store")

        _ = try await session.loadData(CacheTest.request(url, headers: ["Cache-Control": "no-store"]))
        #expect(store.cache.cachedResponse(for: URLRequest(url: url)) == nil)
    }

    @Test func bodyLargerThanTheCacheAllowsIsNotCached() async throws {
        let large = String(repeating: "x", count: 10_000)
        let server = try CacheTestServer { request, _ in
            .ok(request.path == "/large" ? large : "small", [CacheTestServer.dateHeader] + Self.fresh)
        }
        defer { server.stop() }
        // 5% of 100 000 bytes: responses up to 5 000 bytes are cached.
        let store = CacheTest.store(memory: 100_000, disk: 0)
        defer { store.remove() }
        let delegate = CacheTestDelegate()
        let session = CacheTest.session(cache: store.cache, delegate: delegate)
        defer { session.finishTasksAndInvalidate() }

        for path in ["/large", "/large", "/small", "/small"] {
            try await delegate.run(session.dataTask(with: server.url(path)))
        }
        #expect(server.count("/large") == 2)
        #expect(server.count("/small") == 1)
        // The same holds for a task with a completion handler, which keeps the body anyway.
        _ = try await session.loadData(server.url("/large"))
        #expect(server.count("/large") == 3)
        #expect(store.cache.cachedResponse(for: URLRequest(url: server.url("/large"))) == nil)
    }

    @Test func downloadTasksDoNotStoreResponses() async throws {
        let server = try CacheTestServer { _, count in .ok("v\(count)", [CacheTestServer.dateHeader] + Self.fresh) }
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        let session = CacheTest.session(cache: store.cache)
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/download")

        let shot = OneShot<DownloadResult>()
        session.downloadTask(with: url) { location, response, error in
            shot.fulfil(DownloadResult(location: location, response: response, error: error, contentDuringHandler: nil))
        }.resume()
        let result = try await shot.wait()
        #expect(result.error == nil)
        #expect(store.cache.cachedResponse(for: URLRequest(url: url)) == nil)
    }

    @Test func unsafeMethodInvalidatesTheStoredResponse() async throws {
        let server = try CacheTestServer { request, count in
            request.method == "POST" ? CacheTestResponse(status: 201) : .ok("v\(count)", [CacheTestServer.dateHeader] + Self.fresh)
        }
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        let session = CacheTest.session(cache: store.cache)
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/doc")

        _ = try await session.loadData(url)
        #expect(store.cache.cachedResponse(for: URLRequest(url: url)) != nil)
        var post = URLRequest(url: url)
        post.httpMethod = "POST"
        post.httpBody = Data("change".utf8)
        _ = try await session.loadData(post)
        #expect(store.cache.cachedResponse(for: URLRequest(url: url)) == nil)
        #expect(CacheTest.text(try await session.loadData(url)) == "v3")
    }

    // MARK: Request cache policies

    @Test func reloadIgnoringLocalCacheDataAlwaysLoads() async throws {
        for policy in [URLRequest.CachePolicy.reloadIgnoringLocalCacheData, .reloadIgnoringLocalAndRemoteCacheData] {
            let server = try CacheTestServer { _, count in
                .ok("v\(count)", [CacheTestServer.dateHeader, ("ETag", "\"e\"")] + Self.fresh)
            }
            defer { server.stop() }
            let store = CacheTest.store()
            defer { store.remove() }
            let session = CacheTest.session(cache: store.cache)
            defer { session.finishTasksAndInvalidate() }
            let url = server.url("/reload")

            _ = try await session.loadData(url)
            let second = try await session.loadData(CacheTest.request(url, policy: policy))
            #expect(CacheTest.text(second) == "v2", "\(policy)")
            #expect(server.requests(url.path).last?.header("If-None-Match") == nil, "\(policy)")
            // The fresh response it loaded was stored.
            #expect(CacheTest.text(try await session.loadData(url)) == "v2", "\(policy)")
            #expect(server.count(url.path) == 2, "\(policy)")
        }
    }

    @Test func returnCacheDataElseLoadUsesStaleDataAndLoadsWhenNothingIsCached() async throws {
        let server = try CacheTestServer { _, count in
            .ok("v\(count)", [CacheTestServer.dateHeader, ("Cache-Control", "max-age=0"), ("ETag", "\"s\"")])
        }
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        let delegate = CacheTestDelegate()
        let session = CacheTest.session(cache: store.cache, delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/else-load")

        let first = session.dataTask(with: CacheTest.request(url, policy: .returnCacheDataElseLoad))
        try await delegate.run(first)
        #expect(delegate.body(of: first) == "v1")
        let second = session.dataTask(with: CacheTest.request(url, policy: .returnCacheDataElseLoad))
        try await delegate.run(second)
        #expect(delegate.body(of: second) == "v1", "the stale response is used as is")
        #expect(server.count(url.path) == 1)
        #expect(delegate.metrics(of: second)?.transactionMetrics.last?.resourceFetchType == .localCache)
    }

    @Test func returnCacheDataDontLoadNeverLoads() async throws {
        let server = try CacheTestServer { _, count in
            .ok("v\(count)", [CacheTestServer.dateHeader, ("Cache-Control", "max-age=0")])
        }
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        let session = CacheTest.session(cache: store.cache)
        defer { session.finishTasksAndInvalidate() }

        let missing = try await session.loadData(CacheTest.request(server.url("/offline"), policy: .returnCacheDataDontLoad))
        #expect(missing.urlError?.code == .resourceUnavailable)
        #expect(missing.urlError?.failingURL == server.url("/offline"))
        #expect(missing.data == nil)
        #expect(server.count("/offline") == 0)

        _ = try await session.loadData(server.url("/offline"))
        let hit = try await session.loadData(CacheTest.request(server.url("/offline"), policy: .returnCacheDataDontLoad))
        #expect(hit.error == nil)
        #expect(CacheTest.text(hit) == "v1")
        #expect(server.count("/offline") == 1)
    }

    @Test func returnCacheDataDontLoadWithoutACacheFails() async throws {
        let server = try CacheTestServer { _, count in .ok("v\(count)") }
        defer { server.stop() }
        let session = CacheTest.session(cache: nil)
        defer { session.finishTasksAndInvalidate() }

        let result = try await session.loadData(CacheTest.request(server.url("/none"), policy: .returnCacheDataDontLoad))
        #expect(result.urlError?.code == .resourceUnavailable)
        #expect(server.count("/none") == 0)
    }

    @Test func reloadRevalidatingCacheDataRevalidatesFreshResponses() async throws {
        let server = try CacheTestServer { request, count in
            if request.header("If-None-Match") == "\"r\"" { return .notModified([CacheTestServer.dateHeader]) }
            return .ok("v\(count)", [CacheTestServer.dateHeader, ("ETag", "\"r\"")] + Self.fresh)
        }
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        let session = CacheTest.session(cache: store.cache)
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/revalidating")

        _ = try await session.loadData(url)
        let second = try await session.loadData(CacheTest.request(url, policy: .reloadRevalidatingCacheData))
        #expect(CacheTest.text(second) == "v1")
        #expect(server.count(url.path) == 2)
        #expect(server.requests(url.path).last?.header("If-None-Match") == "\"r\"")
    }

    @Test func configurationCachePolicyAppliesToDefaultRequests() async throws {
        let server = try CacheTestServer { _, count in .ok("v\(count)", [CacheTestServer.dateHeader] + Self.fresh) }
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        let offline = CacheTest.session(cache: store.cache) { $0.requestCachePolicy = .returnCacheDataDontLoad }
        defer { offline.finishTasksAndInvalidate() }
        let online = CacheTest.session(cache: store.cache)
        defer { online.finishTasksAndInvalidate() }
        let url = server.url("/configured")

        #expect(try await offline.loadData(url).urlError?.code == .resourceUnavailable)
        _ = try await online.loadData(url)
        #expect(CacheTest.text(try await offline.loadData(url)) == "v1")
        // A request's own policy wins over the configuration's.
        #expect(CacheTest.text(try await offline.loadData(CacheTest.request(url, policy: .reloadIgnoringLocalCacheData))) == "v2")
        #expect(server.count(url.path) == 2)
    }

    // MARK: willCacheResponse and storage policies

    @Test func willCacheResponseComesBeforeCompletionAndCanChangeTheResponse() async throws {
        let server = try CacheTestServer { _, count in .ok("v\(count)", [CacheTestServer.dateHeader] + Self.fresh) }
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        let delegate = CacheTestDelegate { proposed in
            CachedURLResponse(response: proposed.response, data: Data("changed".utf8), userInfo: ["by": "delegate"],
                              storagePolicy: .allowed)
        }
        let session = CacheTest.session(cache: store.cache, delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/will-cache")

        let task = session.dataTask(with: url)
        try await delegate.run(task)
        #expect(delegate.events(of: task) == ["response", "data", "willCache", "metrics", "complete"])
        let proposed = try #require(delegate.proposed(for: task))
        #expect(proposed.storagePolicy == .allowed)
        #expect(proposed.data == Data("v1".utf8))
        #expect((proposed.response as? HTTPURLResponse)?.statusCode == 200)

        let stored = try #require(store.cache.cachedResponse(for: URLRequest(url: url)))
        #expect(stored.data == Data("changed".utf8))
        #expect(stored.userInfo?["by"] as? String == "delegate")
        let next = session.dataTask(with: url)
        try await delegate.run(next)
        #expect(delegate.body(of: next) == "changed")
        #expect(server.count(url.path) == 1)
    }

    @Test func willCacheResponseCanRefuse() async throws {
        let server = try CacheTestServer { _, count in .ok("v\(count)", [CacheTestServer.dateHeader] + Self.fresh) }
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        let delegate = CacheTestDelegate { _ in nil }
        let session = CacheTest.session(cache: store.cache, delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/refused")

        let task = session.dataTask(with: url)
        try await delegate.run(task)
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.events(of: task).contains("willCache"))
        #expect(store.cache.cachedResponse(for: URLRequest(url: url)) == nil)
        let next = session.dataTask(with: url)
        try await delegate.run(next)
        #expect(delegate.body(of: next) == "v2")
    }

    @Test func memoryOnlyResponsesStayOffDisk() async throws {
        let server = try CacheTestServer { request, count in .ok("\(request.path) v\(count)", [CacheTestServer.dateHeader] + Self.fresh) }
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        let delegate = CacheTestDelegate { proposed in
            guard proposed.response.url?.path == "/memory" else { return proposed }
            return CachedURLResponse(response: proposed.response, data: proposed.data, userInfo: nil,
                                     storagePolicy: .allowedInMemoryOnly)
        }
        let session = CacheTest.session(cache: store.cache, delegate: delegate)
        defer { session.finishTasksAndInvalidate() }

        try await delegate.run(session.dataTask(with: server.url("/memory")))
        let inMemory = try #require(store.cache.cachedResponse(for: URLRequest(url: server.url("/memory"))))
        #expect(inMemory.storagePolicy == .allowedInMemoryOnly)
        #expect(store.cache.currentDiskUsage == 0)
        #expect(CacheTest.files(in: store.directory).isEmpty)

        // An `.allowed` response goes to disk too, where another cache on the directory finds it.
        try await delegate.run(session.dataTask(with: server.url("/disk")))
        #expect(store.cache.currentDiskUsage > 0)
        #expect(CacheTest.files(in: store.directory).count == 1)
        let reader = URLCache(memoryCapacity: 0, diskCapacity: 8 << 20, diskPath: store.directory.path)
        #expect(reader.cachedResponse(for: URLRequest(url: server.url("/disk")))?.data == Data("/disk v1".utf8))
        #expect(reader.cachedResponse(for: URLRequest(url: server.url("/memory"))) == nil)
    }

    @Test func completionHandlerTasksStoreWithoutAskingTheDelegate() async throws {
        let server = try CacheTestServer { _, count in .ok("v\(count)", [CacheTestServer.dateHeader] + Self.fresh) }
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        let delegate = CacheTestDelegate { _ in nil }
        let session = CacheTest.session(cache: store.cache, delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/handler")

        _ = try await session.loadData(url)
        let stored = try #require(store.cache.cachedResponse(for: URLRequest(url: url)))
        #expect(stored.data == Data("v1".utf8))
        #expect(stored.storagePolicy == .allowed)
    }

    // MARK: Vary

    @Test func varyMatchesOnlyEqualRequestHeaders() async throws {
        let server = try CacheTestServer { request, count in
            .ok("\(request.header("Accept-Language") ?? "none") #\(count)",
                [CacheTestServer.dateHeader, ("Vary", "Accept-Language")] + Self.fresh)
        }
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        let session = CacheTest.session(cache: store.cache)
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/vary")
        func load(_ language: String) async throws -> String {
            CacheTest.text(try await session.loadData(CacheTest.request(url, headers: ["Accept-Language": language])))
        }

        #expect(try await load("en") == "en #1")
        #expect(try await load("en") == "en #1")
        #expect(server.count(url.path) == 1)
        #expect(try await load("fr") == "fr #2")
        #expect(try await load("fr") == "fr #2")
        #expect(server.count(url.path) == 2)
        // Only one response is kept per URL: French replaced English.
        #expect(try await load("en") == "en #3")
    }

    #if compiler(>=6.3) && os(Linux)
    @Test func sharedCacheDirectoryIsTemporaryDuringTests() {
        // `CacheTestHome` points XDG_CACHE_HOME at a temporary directory before the tests start.
        let directory = URLCache.diskDirectory(for: nil).path
        #expect(directory.contains("/\(CacheTestHome.directoryPrefix)"))
    }
    #endif

    @Test func varyStarIsNeverReused() async throws {
        let server = try CacheTestServer { _, count in
            .ok("v\(count)", [CacheTestServer.dateHeader, ("Vary", "*")] + Self.fresh)
        }
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        let session = CacheTest.session(cache: store.cache)
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/vary-star")

        _ = try await session.loadData(url)
        #expect(CacheTest.text(try await session.loadData(url)) == "v2")
        #expect(store.cache.cachedResponse(for: URLRequest(url: url)) == nil)
    }
}

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
