import Foundation
import Testing
@testable import Courier

@Suite("URLCache")
struct URLCacheTests {

    private func request(_ string: String, method: String = "GET") throws -> URLRequest {
        var request = URLRequest(url: try #require(URL(string: string)))
        request.httpMethod = method
        return request
    }

    private func entry(_ string: String, body: Int, policy: URLCache.StoragePolicy = .allowed) throws -> CachedURLResponse {
        let url = try #require(URL(string: string))
        let response = try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                                                    headerFields: ["Content-Type": "text/plain; charset=utf-8",
                                                                   "ETag": "\"v1\""]))
        return CachedURLResponse(response: response, data: Data(repeating: 0x61, count: body),
                                 userInfo: ["tag": "t"], storagePolicy: policy)
    }

    /// A fresh, unique directory under the system's temporary directory.
    private func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-urlcache-tests-\(UUID().uuidString)", isDirectory: true)
    }

    @Test func storesAndReturnsGETResponses() throws {
        let cache = URLCache(memoryCapacity: 100_000, diskCapacity: 0, diskPath: nil)
        let stored = try entry("https://example.com/a", body: 10)
        cache.storeCachedResponse(stored, for: try request("https://example.com/a"))
        let hit = try #require(cache.cachedResponse(for: try request("https://example.com/a")))
        #expect(hit === stored)
        #expect(hit.userInfo?["tag"] as? String == "t")
        // The fragment is not part of the key.
        #expect(cache.cachedResponse(for: try request("https://example.com/a#section")) === stored)
        #expect(cache.cachedResponse(for: try request("https://example.com/b")) == nil)
        #expect(cache.cachedResponse(for: try request("https://example.com/a", method: "POST")) == nil)
        #expect(cache.currentMemoryUsage == 10 + URLCache.memoryEntryOverhead)
    }

    @Test func ignoresNonGETStores() throws {
        let cache = URLCache(memoryCapacity: 100_000, diskCapacity: 0, diskPath: nil)
        cache.storeCachedResponse(try entry("https://example.com/a", body: 10), for: try request("https://example.com/a", method: "POST"))
        #expect(cache.currentMemoryUsage == 0)
        #expect(cache.cachedResponse(for: try request("https://example.com/a")) == nil)
    }

    @Test func evictsLeastRecentlyUsed() throws {
        let cost = 1000 + URLCache.memoryEntryOverhead
        let cache = URLCache(memoryCapacity: 2 * cost, diskCapacity: 0, diskPath: nil)
        cache.storeCachedResponse(try entry("https://e.com/1", body: 1000), for: try request("https://e.com/1"))
        cache.storeCachedResponse(try entry("https://e.com/2", body: 1000), for: try request("https://e.com/2"))
        // Touch 1 so that 2 becomes the least recently used.
        #expect(cache.cachedResponse(for: try request("https://e.com/1")) != nil)
        cache.storeCachedResponse(try entry("https://e.com/3", body: 1000), for: try request("https://e.com/3"))
        #expect(cache.cachedResponse(for: try request("https://e.com/1")) != nil)
        #expect(cache.cachedResponse(for: try request("https://e.com/2")) == nil)
        #expect(cache.cachedResponse(for: try request("https://e.com/3")) != nil)
        #expect(cache.currentMemoryUsage == 2 * cost)

        // Too large to fit at all: not stored, nothing else evicted.
        cache.storeCachedResponse(try entry("https://e.com/big", body: 10_000), for: try request("https://e.com/big"))
        #expect(cache.cachedResponse(for: try request("https://e.com/big")) == nil)
        #expect(cache.currentMemoryUsage == 2 * cost)

        // Shrinking the capacity evicts at once.
        cache.memoryCapacity = cost
        #expect(cache.memoryCapacity == cost)
        #expect(cache.currentMemoryUsage == cost)
    }

    @Test func replacingAnEntryKeepsUsageRight() throws {
        let cache = URLCache(memoryCapacity: 100_000, diskCapacity: 0, diskPath: nil)
        cache.storeCachedResponse(try entry("https://e.com/x", body: 100), for: try request("https://e.com/x"))
        cache.storeCachedResponse(try entry("https://e.com/x", body: 300), for: try request("https://e.com/x"))
        #expect(cache.currentMemoryUsage == 300 + URLCache.memoryEntryOverhead)
        cache.removeCachedResponse(for: try request("https://e.com/x"))
        #expect(cache.currentMemoryUsage == 0)
        #expect(cache.cachedResponse(for: try request("https://e.com/x")) == nil)
    }

    @Test func respectsStoragePolicies() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = URLCache(memoryCapacity: 100_000, diskCapacity: 100_000, diskPath: directory.path)

        cache.storeCachedResponse(try entry("https://e.com/no", body: 10, policy: .notAllowed), for: try request("https://e.com/no"))
        #expect(cache.cachedResponse(for: try request("https://e.com/no")) == nil)
        #expect(cache.currentMemoryUsage == 0)

        cache.storeCachedResponse(try entry("https://e.com/mem", body: 10, policy: .allowedInMemoryOnly), for: try request("https://e.com/mem"))
        #expect(cache.cachedResponse(for: try request("https://e.com/mem")) != nil)
        #expect(cache.currentDiskUsage == 0)

        cache.storeCachedResponse(try entry("https://e.com/all", body: 10, policy: .allowed), for: try request("https://e.com/all"))
        #expect(cache.currentDiskUsage > 10)
    }

    @Test func diskStoreRoundTrip() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let body = Data("hello, disk".utf8)
        let url = try #require(URL(string: "https://example.com/data?q=1"))
        let response = try #require(HTTPURLResponse(url: url, statusCode: 203, httpVersion: "HTTP/1.1",
                                                    headerFields: ["Content-Type": "text/plain; charset=utf-8",
                                                                   "X-Custom": "yes"]))
        do {
            let writer = URLCache(memoryCapacity: 0, diskCapacity: 1_000_000, diskPath: directory.path)
            writer.storeCachedResponse(CachedURLResponse(response: response, data: body), for: URLRequest(url: url))
            #expect(writer.currentMemoryUsage == 0)
            #expect(writer.currentDiskUsage > body.count)
        }

        // The directory is private, and holds one entry file and no temporary files.
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o700)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(files.count == 1)
        #expect(files.first?.hasSuffix(".cache") == true)

        // A new cache on the same directory finds the entry.
        let reader = URLCache(memoryCapacity: 100_000, diskCapacity: 1_000_000, diskPath: directory.path)
        let hit = try #require(reader.cachedResponse(for: URLRequest(url: url)))
        #expect(hit.data == body)
        #expect(hit.storagePolicy == .allowed)
        let http = try #require(hit.response as? HTTPURLResponse)
        #expect(http.url == url)
        #expect(http.statusCode == 203)
        #expect(http.value(forHTTPHeaderField: "x-custom") == "yes")
        #expect(http.mimeType == "text/plain")
        #expect(http.textEncodingName == "utf-8")
        // The hit was brought back into memory.
        #expect(reader.currentMemoryUsage == body.count + URLCache.memoryEntryOverhead)

        reader.removeAllCachedResponses()
        #expect(reader.currentDiskUsage == 0)
        #expect(reader.currentMemoryUsage == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test func plainURLResponsesSurviveTheDisk() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = try #require(URL(string: "https://example.com/file.bin"))
        let response = URLResponse(url: url, mimeType: "application/octet-stream", expectedContentLength: 3, textEncodingName: nil)
        let writer = URLCache(memoryCapacity: 0, diskCapacity: 1_000_000, diskPath: directory.path)
        writer.storeCachedResponse(CachedURLResponse(response: response, data: Data([1, 2, 3])), for: URLRequest(url: url))
        let hit = try #require(writer.cachedResponse(for: URLRequest(url: url)))
        #expect(!(hit.response is HTTPURLResponse))
        #expect(hit.response.mimeType == "application/octet-stream")
        #expect(hit.response.expectedContentLength == 3)
        #expect(hit.data == Data([1, 2, 3]))
    }

    @Test func diskStoreEvictsBySize() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = URLCache(memoryCapacity: 0, diskCapacity: 5_000, diskPath: directory.path)
        for index in 0..<5 {
            cache.storeCachedResponse(try entry("https://e.com/\(index)", body: 1_500), for: try request("https://e.com/\(index)"))
        }
        #expect(cache.currentDiskUsage <= 5_000)
        #expect(cache.cachedResponse(for: try request("https://e.com/4")) != nil)
        #expect(cache.cachedResponse(for: try request("https://e.com/0")) == nil)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(files.count < 5)

        cache.diskCapacity = 0
        #expect(cache.currentDiskUsage == 0)
    }

    @Test func removesResponsesStoredSinceADate() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = URLCache(memoryCapacity: 100_000, diskCapacity: 100_000, diskPath: directory.path)
        cache.storeCachedResponse(try entry("https://e.com/old", body: 10), for: try request("https://e.com/old"))
        Thread.sleep(forTimeInterval: 0.02)
        let cutoff = Date()
        Thread.sleep(forTimeInterval: 0.02)
        cache.storeCachedResponse(try entry("https://e.com/new", body: 10), for: try request("https://e.com/new"))

        cache.removeCachedResponses(since: cutoff)
        #expect(cache.cachedResponse(for: try request("https://e.com/old")) != nil)
        #expect(cache.cachedResponse(for: try request("https://e.com/new")) == nil)
        #expect(cache.currentMemoryUsage == 10 + URLCache.memoryEntryOverhead)

        // The old entry is still on disk as well.
        let fresh = URLCache(memoryCapacity: 0, diskCapacity: 100_000, diskPath: directory.path)
        #expect(fresh.cachedResponse(for: try request("https://e.com/old")) != nil)
        #expect(fresh.cachedResponse(for: try request("https://e.com/new")) == nil)
    }

    @Test func sharedCacheIsStableAndSettable() {
        // Other suites may use the shared cache concurrently, so it is only re-assigned to itself.
        let original = URLCache.shared
        #expect(URLCache.shared === original)
        #expect(original.memoryCapacity == 4 * 1024 * 1024)
        #expect(original.diskCapacity == 20 * 1024 * 1024)
        URLCache.shared = original
        #expect(URLCache.shared === original)
    }

    @Test func diskDirectoryResolution() {
        #expect(URLCache.diskDirectory(for: "/var/tmp/x").path == "/var/tmp/x")
        let relative = URLCache.diskDirectory(for: "my-cache").path
        #expect(relative.hasSuffix("/my-cache"))
        #expect(relative.hasPrefix("/"))
        #expect(URLCache.diskDirectory(for: nil).path.hasSuffix("/Courier.URLCache"))
    }

    @Test func cachedResponseEqualityAndCopy() throws {
        let a = try entry("https://e.com/x", body: 5)
        let b = CachedURLResponse(response: a.response, data: a.data, userInfo: nil, storagePolicy: .allowed)
        let c = CachedURLResponse(response: a.response, data: a.data, userInfo: nil, storagePolicy: .notAllowed)
        #expect(a.isEqual(b))
        #expect(a.hash == b.hash)
        #expect(!a.isEqual(c))
        let copied = try #require(a.copy() as? CachedURLResponse)
        #expect(copied === a)
        let simple = CachedURLResponse(response: a.response, data: Data())
        #expect(simple.storagePolicy == .allowed)
        #expect(simple.userInfo == nil)
    }
}
