import Foundation
import Testing
@testable import Courier

/// Compressed response bodies (gzip, deflate, br, zstd) are decoded before the app sees them.
@Suite("HTTP content encodings")
struct HTTPContentEncodingTests {

    /// Text that compresses well, with some variety.
    static let original = Data((0..<2000).map { "line \($0): the quick brown fox jumps over the lazy dog\n" }.joined().utf8)

    @Test(arguments: ["gzip", "deflate", "br", "zstd"])
    func encodedBodyIsDecoded(encoding: String) async throws {
        let compressed = try CompressedBody.make(Self.original, encoding: encoding)
        #expect(compressed.count < Self.original.count / 4)
        let server = try FaultServer(routes: [
            "/encoded": .respond(.ok(compressed, headers: [("Content-Type", "text/plain; charset=utf-8"), ("Content-Encoding", encoding)])),
        ])
        defer { server.stop() }
        let delegate = EventDelegate()
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url("/encoded"))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == Self.original)
        let response = try HTTPTest.http(delegate.response(of: task))
        #expect(response.value(forHTTPHeaderField: "Content-Encoding") == encoding)
        #expect(response.textEncodingName == "utf-8")
        // The request offered the encoding.
        let accept = try #require(server.requests(for: "/encoded").first?.header("Accept-Encoding"))
        #expect(accept.contains(encoding))
        let transaction = try #require(delegate.metrics(of: task)?.transactionMetrics.last)
        #expect(transaction.countOfResponseBodyBytesReceived == Int64(compressed.count))
        #expect(transaction.countOfResponseBodyBytesAfterDecoding == Int64(Self.original.count))
    }

    @Test(arguments: ["gzip", "br", "zstd"])
    func encodedChunkedBodyIsDecoded(encoding: String) async throws {
        let compressed = try CompressedBody.make(Self.original, encoding: encoding)
        // Pieces that cut the compressed stream at arbitrary points.
        var pieces: [Data] = []
        var offset = 0
        var size = 7
        while offset < compressed.count {
            let end = min(offset + size, compressed.count)
            pieces.append(compressed.subdata(in: offset..<end))
            offset = end
            size = size * 3 % 1013 + 1
        }
        let server = try FaultServer(routes: [
            "/chunked": .chunked(pieces: pieces, delay: 0, headers: [("Content-Encoding", encoding)]),
        ])
        defer { server.stop() }
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let result = try await session.loadData(server.url("/chunked"))
        #expect(result.error == nil)
        #expect(result.data == Self.original)
    }

    @Test func nginxGzipIsDecoded() async throws {
        let server = try await HTTPTest.nginx()
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let result = try await session.loadData(server.url(NginxServer.Files.text))
        #expect(result.error == nil)
        #expect(result.data == (try server.contents(of: NginxServer.Files.text)))
        let response = try HTTPTest.http(result.response)
        #expect(response.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
    }

    @Test func explicitAcceptEncodingIsHonoured() async throws {
        let server = try await HTTPTest.nginx()
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url(NginxServer.Files.text))
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        let result = try await session.loadData(request)
        #expect(result.error == nil)
        #expect(result.data == (try server.contents(of: NginxServer.Files.text)))
        let response = try HTTPTest.http(result.response)
        #expect(response.value(forHTTPHeaderField: "Content-Encoding") == nil)
        #expect(response.expectedContentLength == Int64(result.data?.count ?? -1))
    }

    @Test func corruptGzipFailsToDecode() async throws {
        var compressed = try CompressedBody.make(Self.original, encoding: "gzip")
        // Keep the gzip header, ruin the deflate stream.
        for index in 20..<min(compressed.count, 400) { compressed[index] ^= 0xA5 }
        let server = try FaultServer(routes: [
            "/corrupt": .respond(.ok(compressed, headers: [("Content-Encoding", "gzip")])),
        ])
        defer { server.stop() }
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/corrupt")
        let result = try await session.loadData(url)
        let error = try HTTPTest.urlError(result.error)
        #expect(error.code == .cannotDecodeContentData)
        #expect(HTTPTest.hasFailingURL(error, url))
    }
}
