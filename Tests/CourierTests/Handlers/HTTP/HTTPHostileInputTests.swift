import Foundation
import Testing
@testable import Courier

/// Responses (and requests) built to hurt: each fails or succeeds in bounded time and memory, with
/// an error that says what happened.
@Suite("HTTP hostile input")
struct HTTPHostileInputTests {

    /// A head of 75,000 obs-fold continuation lines (300,000 bytes, inside libcurl's 300 KiB limit
    /// for a head) is joined in linear time on the session's loop thread.
    @Test func manyFoldedHeaderLinesAreJoinedQuickly() async throws {
        let lineCount = 75_000
        let head = "HTTP/1.1 200 OK\r\nX-Folded: start\r\n" + String(repeating: " x\r\n", count: lineCount)
            + "Content-Length: 2\r\n\r\nhi"
        let server = try FaultServer(routes: ["/folded": .raw(Data(head.utf8))])
        defer { server.stop() }
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let started = Date()
        let result = try await session.loadData(server.url("/folded"), timeout: 20)
        #expect(result.error == nil, "\(String(describing: result.error))")
        #expect(result.data == Data("hi".utf8))
        let folded = try HTTPTest.http(result.response).value(forHTTPHeaderField: "X-Folded")
        #expect(folded?.utf8.count == "start".count + lineCount * " x".count)
        #expect(Date().timeIntervalSince(started) < 10)
    }

    /// A URL too long for libcurl to build a request from (its request heads are at most 1 MiB) fails
    /// with `badURL` saying so, not as a response whose headers were too large: nothing was sent.
    @Test func oneMebibyteURLIsTooLong() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        let url = server.url("/" + String(repeating: "a", count: 1 << 20))
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let result = try await session.loadData(url, timeout: 20)
        let error = try HTTPTest.urlError(result.error)
        #expect(error.code == .badURL, "got \(error.code): \(error.localizedDescription)")
        #expect(error.localizedDescription.contains("too long"), "\(error.localizedDescription)")
        #expect(HTTPTest.hasFailingURL(error, url))
        #expect(server.requests.isEmpty, "nothing reaches the server")
    }
}
