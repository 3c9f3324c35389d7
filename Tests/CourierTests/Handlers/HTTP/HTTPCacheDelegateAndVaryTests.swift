import Foundation
import Testing
@testable import Courier

/// HTTP caching end to end, continued: `willCacheResponse`, storage policies and `Vary` (the
/// suite and its fixtures are in `HTTPCacheTests.swift`).
extension HTTPCacheTests {
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
