import Foundation
import Testing
@testable import Courier

@Suite("URLCache data-task methods")
struct URLCacheTasksTests {

    private static func response(for url: URL, body: String) throws -> CachedURLResponse {
        let http = try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: nil))
        return CachedURLResponse(response: http, data: Data(body.utf8), userInfo: nil, storagePolicy: .allowedInMemoryOnly)
    }

    @Test func storesLooksUpAndRemovesByTheTasksCurrentRequest() async throws {
        let url = try #require(URL(string: "https://example.com/cached"))
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: url)
        let cache = URLCache(memoryCapacity: 100_000, diskCapacity: 0, diskPath: nil)

        cache.storeCachedResponse(try Self.response(for: url, body: "hello"), for: task)
        #expect(cache.cachedResponse(for: URLRequest(url: url))?.data == Data("hello".utf8))

        let found = Locked<CachedURLResponse??>(nil)
        cache.getCachedResponse(for: task) { response in found.withLock { $0 = .some(response) } }
        #expect(await waitUntil { found.current != nil })
        #expect(found.current??.data == Data("hello".utf8))

        cache.removeCachedResponse(for: task)
        #expect(cache.cachedResponse(for: URLRequest(url: url)) == nil)

        let missing = Locked<CachedURLResponse??>(nil)
        cache.getCachedResponse(for: task) { response in missing.withLock { $0 = .some(response) } }
        #expect(await waitUntil { missing.current != nil })
        #expect(missing.current == .some(nil))
    }

    @Test func goesThroughTheRequestMethodsSoSubclassesAreHonoured() throws {
        final class RecordingCache: URLCache, @unchecked Sendable {
            let stored = Locked<[URL]>([])
            override func storeCachedResponse(_ cachedResponse: CachedURLResponse, for request: URLRequest) {
                stored.withLock { $0.append(request.url ?? URL(fileURLWithPath: "/")) }
            }
        }
        let url = try #require(URL(string: "https://example.com/sub"))
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let cache = RecordingCache(memoryCapacity: 100_000, diskCapacity: 0, diskPath: nil)
        cache.storeCachedResponse(try Self.response(for: url, body: "x"), for: session.dataTask(with: url))
        #expect(cache.stored.current == [url])
        #expect(cache.cachedResponse(for: URLRequest(url: url)) == nil)
    }
}
