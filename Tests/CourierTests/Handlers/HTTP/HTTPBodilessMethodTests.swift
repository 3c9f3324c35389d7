import Foundation
import Testing
@testable import Courier

/// A GET or HEAD request with a body fails with `dataLengthExceedsMaximum` (-1103), as on Apple's
/// platforms, and is never sent: the server sees only the clean request that follows.
@Suite("HTTP GET and HEAD without a body")
struct HTTPBodilessMethodTests {

    enum Body: String, Sendable, CaseIterable {
        case data, emptyData, stream
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var method: String
        var body: Body
        var testDescription: String { "\(method) with \(body.rawValue)" }
    }

    static let cases: [Case] = ["GET", "HEAD", "get"].flatMap { method in Body.allCases.map { Case(method: method, body: $0) } }

    /// Runs `load` against a fresh echo server and checks the refusal, then that the server only
    /// ever saw the clean request sent afterwards.
    private func expectRefused(load: (URLSession, URL) async throws -> (error: (any Error)?, response: URLResponse?)) async throws {
        let server = try FaultServer(fallback: .echo)
        defer { server.stop() }
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/target")
        let result = try await load(session, url)
        let error = try HTTPTest.urlError(result.error)
        #expect(error.code == .dataLengthExceedsMaximum)
        #expect(HTTPTest.hasFailingURL(error, url))
        #expect(result.response == nil)
        #expect(try await session.loadData(server.url("/clean")).error == nil)
        #expect(server.requests.map(\.path) == ["/clean"])
    }

    @Test(arguments: cases)
    func requestWithABodyIsNotSent(_ testCase: Case) async throws {
        try await expectRefused { session, url in
            var request = URLRequest(url: url)
            request.httpMethod = testCase.method
            switch testCase.body {
            case .data: request.httpBody = Data("body".utf8)
            case .emptyData: request.httpBody = Data()
            case .stream: request.httpBodyStream = InputStream(data: Data("body".utf8))
            }
            let result = try await session.loadData(request)
            return (result.error, result.response)
        }
    }

    @Test func uploadTaskKeepsTheMethodGETAndIsNotSent() async throws {
        try await expectRefused { session, url in
            let shot = OneShot<(error: (any Error)?, response: URLResponse?)>()
            let task = session.uploadTask(with: URLRequest(url: url), from: Data("body".utf8)) { _, response, error in
                shot.fulfil((error, response))
            }
            task.resume()
            return try await shot.wait(timeout: testWaitLimit, "the upload task")
        }
    }

    /// What the cache holds for the URL does not matter: a GET with a body is refused before the
    /// cache is asked, whatever the request's cache policy.
    @Test(arguments: [URLRequest.CachePolicy.returnCacheDataElseLoad, .returnCacheDataDontLoad, .useProtocolCachePolicy])
    func requestWithABodyIsNotAnsweredFromTheCache(_ policy: URLRequest.CachePolicy) async throws {
        let cache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
        let server = try FaultServer(fallback: .echo)
        defer { server.stop() }
        let url = server.url("/cached")
        let cachedResponse = try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                                                          headerFields: ["Cache-Control": "max-age=3600", "Content-Length": "6"]))
        cache.storeCachedResponse(CachedURLResponse(response: cachedResponse, data: Data("cached".utf8)),
                                  for: URLRequest(url: url))
        let session = HTTPTest.session { $0.urlCache = cache }
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: url)
        request.cachePolicy = policy
        request.httpBody = Data("body".utf8)
        let result = try await session.loadData(request)
        let error = try HTTPTest.urlError(result.error)
        #expect(error.code == .dataLengthExceedsMaximum)
        #expect(result.data == nil)
        #expect(server.requests.isEmpty)
    }

    @Test func getWithoutABodyIsSent() async throws {
        let server = try FaultServer(fallback: .echo)
        defer { server.stop() }
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url("/target"))
        request.httpMethod = "HEAD"
        let result = try await session.loadData(request)
        #expect(result.error == nil)
        #expect(server.requests.map(\.method) == ["HEAD"])
    }
}
