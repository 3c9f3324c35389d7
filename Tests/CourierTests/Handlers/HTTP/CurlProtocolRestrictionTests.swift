import Foundation
import Testing
@testable import Courier

/// Each libcurl handler lets libcurl speak only its own protocols (`CURLOPT_PROTOCOLS_STR`): a URL
/// that reaches libcurl with another scheme fails with `unsupportedURL` and nothing is spoken to the
/// server. The handlers are driven directly here, since the session never gives them such a URL.
@Suite("libcurl protocol restriction")
struct CurlProtocolRestrictionTests {
    /// A client that records how the load ended.
    private final class Recorder: NSObject, URLProtocolClient, @unchecked Sendable {
        let outcome = Locked<String?>(nil)
        let error = Locked<URLError?>(nil)

        func urlProtocol(_ protocol: URLProtocol, wasRedirectedTo request: URLRequest, redirectResponse: URLResponse) {
            outcome.withLock { $0 = $0 ?? "redirect" }
        }
        func urlProtocol(_ protocol: URLProtocol, cachedResponseIsValid cachedResponse: CachedURLResponse) {}
        func urlProtocol(_ protocol: URLProtocol, didReceive response: URLResponse, cacheStoragePolicy policy: URLCache.StoragePolicy) {}
        func urlProtocol(_ protocol: URLProtocol, didLoad data: Data) {}
        func urlProtocolDidFinishLoading(_ protocol: URLProtocol) { outcome.withLock { $0 = $0 ?? "finished" } }
        func urlProtocol(_ protocol: URLProtocol, didFailWithError error: any Error) {
            self.error.withLock { $0 = error as? URLError }
            outcome.withLock { $0 = $0 ?? "failed" }
        }
        func urlProtocol(_ protocol: URLProtocol, didReceive challenge: URLAuthenticationChallenge) {
            outcome.withLock { $0 = $0 ?? "challenge" }
        }
        func urlProtocol(_ protocol: URLProtocol, didCancel challenge: URLAuthenticationChallenge) {}
    }

    /// Starts `handler` on `url` and returns the error it failed with.
    private func failure(of handler: URLProtocol.Type, url: URL, sourceLocation: SourceLocation = #_sourceLocation) async throws -> URLError {
        let recorder = Recorder()
        var request = URLRequest(url: url)
        request.timeoutInterval = 10
        let instance = handler.init(request: request, cachedResponse: nil, client: recorder)
        instance.startLoading()
        defer { instance.stopLoading() }
        let ended = await waitUntil(timeout: 20) { recorder.outcome.current != nil }
        #expect(ended, "the load did not end", sourceLocation: sourceLocation)
        #expect(recorder.outcome.current == "failed", sourceLocation: sourceLocation)
        return try #require(recorder.error.current, sourceLocation: sourceLocation)
    }

    @Test func httpHandlerDoesNotSpeakFTP() async throws {
        // An FTP server's greeting: libcurl would log in and ask for the file.
        let server = try TCPTestServer(.greet(Data("220 FTP server ready\r\n".utf8)))
        defer { server.stop() }
        let url = try #require(URL(string: "ftp://127.0.0.1:\(server.port)/file.txt"))
        let error = try await failure(of: HTTPURLProtocol.self, url: url)
        #expect(error.code == .unsupportedURL, "got \(error.code): \(error.localizedDescription)")
        #expect(HTTPTest.hasFailingURL(error, url))
    }

    @Test func ftpHandlerDoesNotSpeakHTTP() async throws {
        let server = try FaultServer(routes: ["/file.txt": .respond(.ok(Data("over http".utf8)))])
        defer { server.stop() }
        let url = server.url("/file.txt")
        let error = try await failure(of: FTPURLProtocol.self, url: url)
        #expect(error.code == .unsupportedURL, "got \(error.code): \(error.localizedDescription)")
        #expect(server.requests.isEmpty, "no HTTP request was sent")
    }

    @Test func optionsNameEachHandlersOwnProtocols() {
        #expect(HTTPTransferConfiguration.protocols == "http,https")
        #expect(FTPTransferConfiguration.protocols == "ftp,ftps")
    }
}
