import Foundation
import Testing
@testable import Courier

/// `maximumResponseBodySize` and the in-memory default (``ResponseBodyLimit``): a body that grows past
/// the limit, counted after content decoding, fails the task with `dataLengthExceedsMaximum` and
/// stops the transfer; nothing past the limit is delivered and no file is left.
@Suite("HTTP response body limit")
struct HTTPResponseBodyLimitTests {
    static let limit: Int64 = 1 << 20
    /// 8 MiB of zeros, gzip-compressed to a few kilobytes: a small decompression bomb.
    static let decoded = 8 << 20
    static let bomb: Data? = try? CompressedBody.make(Data(count: decoded), encoding: "gzip")

    /// A server whose `/bomb` answers ``bomb`` (with a validator, so a download could resume).
    private static func bombServer() throws -> FaultServer {
        let body = try #require(bomb)
        return try FaultServer(routes: ["/bomb": .respond(.ok(body, headers: [("Content-Encoding", "gzip"), ("ETag", "\"v1\""),
                                                                               ("Content-Type", "application/octet-stream")]))])
    }

    /// Runs the task `make` creates, to completion, on a session with an ``EventDelegate`` and the
    /// configuration `configure` sets.
    private static func run(configure: (URLSessionConfiguration) -> Void,
                            _ make: (URLSession) -> URLSessionTask) async throws -> (EventDelegate, URLSessionTask) {
        let delegate = EventDelegate()
        let session = HTTPTest.session(delegate: delegate, configure: configure)
        defer { session.finishTasksAndInvalidate() }
        let task = make(session)
        try await HTTPTest.run(task, delegate)
        return (delegate, task)
    }

    private static func expectExceeded(_ error: (any Error)?, url: URL, limit: Int64 = limit,
                                       sourceLocation: SourceLocation = #_sourceLocation) throws {
        let error = try HTTPTest.urlError(error, sourceLocation: sourceLocation)
        #expect(error.code == .dataLengthExceedsMaximum, "got \(error.code): \(error.localizedDescription)", sourceLocation: sourceLocation)
        #expect(HTTPTest.hasFailingURL(error, url), sourceLocation: sourceLocation)
        #expect(error.localizedDescription.contains("\(limit) bytes"), "\(error.localizedDescription)", sourceLocation: sourceLocation)
    }

    @Test func configuredLimitStopsADecompressionBomb() async throws {
        let server = try Self.bombServer()
        defer { server.stop() }
        #expect(Int64(try #require(Self.bomb).count) < Self.limit, "the limit counts decoded bytes, not bytes on the wire")
        let session = HTTPTest.session { $0.maximumResponseBodySize = Self.limit }
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/bomb")
        let result = try await session.loadData(url, timeout: 20)
        #expect(result.data == nil)
        try Self.expectExceeded(result.error, url: url)
    }

    @Test func inMemoryDefaultLimitsDataForRequest() async throws {
        let server = try Self.bombServer()
        defer { server.stop() }
        let session = HTTPTest.session { $0.inMemoryResponseBodyLimit = Self.limit }
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/bomb")
        do {
            _ = try await session.data(from: url)
            Issue.record("the body past the in-memory limit was returned")
        } catch {
            try Self.expectExceeded(error, url: url)
        }
    }

    @Test func delegateGetsNothingPastAConfiguredLimit() async throws {
        let server = try Self.bombServer()
        defer { server.stop() }
        let url = server.url("/bomb")
        let (delegate, task) = try await Self.run(configure: { $0.maximumResponseBodySize = Self.limit }) { $0.dataTask(with: url) }
        try Self.expectExceeded(delegate.error(of: task), url: url)
        #expect(Int64(delegate.body(of: task).count) <= Self.limit)
        #expect(delegate.completionCount(of: task) == 1)
    }

    @Test func inMemoryDefaultLeavesADelegateStreamAlone() async throws {
        let server = try Self.bombServer()
        defer { server.stop() }
        let url = server.url("/bomb")
        let (delegate, task) = try await Self.run(configure: { $0.inMemoryResponseBodyLimit = Self.limit }) { $0.dataTask(with: url) }
        #expect(delegate.error(of: task) == nil, "\(String(describing: delegate.error(of: task)))")
        #expect(delegate.body(of: task).count == Self.decoded)
    }

    @Test func inMemoryDefaultLeavesADownloadAlone() async throws {
        let server = try Self.bombServer()
        defer { server.stop() }
        let session = HTTPTest.session { $0.inMemoryResponseBodyLimit = Self.limit }
        defer { session.finishTasksAndInvalidate() }
        let (location, _) = try await session.download(from: server.url("/bomb"))
        defer { try? FileManager.default.removeItem(at: location) }
        let size = try FileManager.default.attributesOfItem(atPath: location.path)[.size] as? NSNumber
        #expect(size?.intValue == Self.decoded)
    }

    @Test func configuredLimitFailsADownloadAndRemovesItsFile() async throws {
        let server = try Self.bombServer()
        defer { server.stop() }
        let before = HTTPErrorTests.downloadFiles()
        let url = server.url("/bomb")
        let (delegate, task) = try await Self.run(configure: { $0.maximumResponseBodySize = Self.limit }) { $0.downloadTask(with: url) }
        try Self.expectExceeded(delegate.error(of: task), url: url)
        #expect((delegate.error(of: task) as? URLError)?.downloadTaskResumeData == nil, "no resume data past the limit")
        #expect(delegate.download(of: task) == nil)
        #expect(await waitUntil(timeout: 10) { HTTPErrorTests.downloadFiles().subtracting(before).isEmpty },
                "left behind: \(HTTPErrorTests.downloadFiles().subtracting(before))")
    }

    /// An endless body: the transfer is stopped once the limit is crossed (the server sees its
    /// connection closed), not read until a timeout.
    @Test func anEndlessBodyIsStoppedAtTheLimit() async throws {
        let closed = Locked(false)
        let server = try FaultServer(routes: ["/endless": .custom { _, writer in
            guard writer.writeHead(status: 200, headers: [("Transfer-Encoding", "chunked")]) else { return false }
            let chunk = Data("10000\r\n".utf8) + Data(repeating: 0x61, count: 0x10000) + Data("\r\n".utf8)
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline {
                if !writer.write(chunk) {
                    closed.withLock { $0 = true }
                    break
                }
            }
            return false
        }])
        defer { server.stop() }
        let url = server.url("/endless")
        let (delegate, task) = try await Self.run(configure: { $0.maximumResponseBodySize = Self.limit }) { $0.dataTask(with: url) }
        try Self.expectExceeded(delegate.error(of: task), url: url)
        #expect(await waitUntil(timeout: 10) { closed.current }, "the connection was closed")
    }

    /// A response that announces more than the limit fails as soon as its head arrives: the body
    /// (which this server never sends) is not waited for.
    @Test func anAnnouncedLengthOverTheLimitFailsBeforeTheBody() async throws {
        let server = try FaultServer(routes: ["/big": .custom { _, writer in
            guard writer.writeHead(status: 200, headers: [("Content-Length", "\(8 << 20)")]) else { return false }
            Thread.sleep(forTimeInterval: 15)
            return false
        }])
        defer { server.stop() }
        let url = server.url("/big")
        let started = Date()
        let (delegate, task) = try await Self.run(configure: { $0.maximumResponseBodySize = Self.limit }) { $0.dataTask(with: url) }
        let error = try HTTPTest.urlError(delegate.error(of: task))
        #expect(error.code == .dataLengthExceedsMaximum)
        #expect(error.localizedDescription.contains("announces a body of \(8 << 20) bytes"), "\(error.localizedDescription)")
        #expect(Date().timeIntervalSince(started) < 10, "failed at the head, not after the server's stall")
        #expect((task.response as? HTTPURLResponse)?.statusCode == 200)
    }

    /// A `file:` URL longer than the limit fails the same way (its length is known when it opens).
    @Test func aFileLongerThanTheLimitFails() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-limit-\(UUID().uuidString)")
        try Data(count: 2 << 20).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let session = HTTPTest.session { $0.maximumResponseBodySize = Self.limit }
        defer { session.finishTasksAndInvalidate() }
        let result = try await session.loadData(file, timeout: 20)
        #expect(result.data == nil)
        try Self.expectExceeded(result.error, url: file)
    }

    @Test(arguments: [(1000, true), (999, false)])
    func bodyOfExactlyTheLimitIsDelivered(limit: Int64, delivered: Bool) async throws {
        let body = Data(repeating: 7, count: 1000)
        let server = try FaultServer(routes: ["/body": .respond(.ok(body))])
        defer { server.stop() }
        let session = HTTPTest.session { $0.maximumResponseBodySize = limit }
        defer { session.finishTasksAndInvalidate() }
        let result = try await session.loadData(server.url("/body"), timeout: 20)
        #expect((result.data == body) == delivered)
        #expect(((result.error as? URLError)?.code == .dataLengthExceedsMaximum) == !delivered)
    }

    @Test func theLimitIsCopiedWithTheConfiguration() throws {
        let configuration = URLSessionConfiguration.ephemeral
        #expect(configuration.maximumResponseBodySize == nil)
        configuration.maximumResponseBodySize = 4096
        let copy = try #require(configuration.copy() as? URLSessionConfiguration)
        #expect(copy.maximumResponseBodySize == 4096)
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        #expect(session.configuration.maximumResponseBodySize == 4096)
        #expect(session.environment.responseBodyLimit.limit(collectsInMemory: false) == 4096)
    }

    @Test func theInMemoryDefaultIsOneGibibyte() {
        #expect(ResponseBodyLimit().limit(collectsInMemory: true) == 1 << 30)
        #expect(ResponseBodyLimit().limit(collectsInMemory: false) == nil)
    }
}
