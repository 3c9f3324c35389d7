import Foundation
import Testing
@testable import Courier

/// HTTP caching end to end against ``CacheTestServer`` on 127.0.0.1: freshness, revalidation with
/// `ETag` and `Last-Modified`, `no-store`, every request cache policy, `willCacheResponse`, storage
/// policies and `Vary`. Each test uses its own `URLCache` in a temporary directory.
@Suite("HTTP cache")
struct HTTPCacheTests {

    /// A response that stays fresh for a minute.
    static let fresh: [(String, String)] = [("Cache-Control", "max-age=60")]

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
}
