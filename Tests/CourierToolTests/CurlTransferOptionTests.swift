import Foundation
import Testing

@testable import CourierTool

/// The curl-compatible transfer options (`--retry`, `-C`, `-Z`/`--parallel-max`) against servers
/// this test process runs on 127.0.0.1.
@Suite("courier transfer options")
struct CurlTransferOptionTests {
    // MARK: --retry

    /// `/flaky` answers 503 `failures` times, then 200 `ok`.
    static func flakyServer(failures: Int) throws -> FaultServer {
        let count = Locked(0)
        return try FaultServer(routes: ["/flaky": .handler { _ in
            let seen = count.withLock { value -> Int in
                value += 1
                return value
            }
            return seen <= failures ? .ok(Data("busy\n".utf8), status: 503, reason: "Service Unavailable") : .ok(Data("ok\n".utf8))
        }])
    }

    @Test func retryTriesATransientStatusAgain() async throws {
        let server = try Self.flakyServer(failures: 2)
        defer { server.stop() }
        let run = try await CourierBinary.run(["--retry", "2", "--retry-delay", "0.1", server.url("/flaky").absoluteString])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdoutText == "ok\n")
        #expect(server.requests(for: "/flaky").count == 3)
        #expect(run.stderr.components(separatedBy: "retrying in").count == 3, "\(run.stderr)")
    }

    @Test func withoutRetryTheFirstAnswerStands() async throws {
        let server = try Self.flakyServer(failures: 2)
        defer { server.stop() }
        let run = try await CourierBinary.run(["-w", " %{http_code}", server.url("/flaky").absoluteString])
        #expect(run.status == 0)
        #expect(run.stdoutText == "busy\n 503")
        #expect(server.requests(for: "/flaky").count == 1)
    }

    @Test func retryGivesUpAfterItsTries() async throws {
        let server = try Self.flakyServer(failures: 5)
        defer { server.stop() }
        let run = try await CourierBinary.run(["--retry", "1", "--retry-delay", "0", "--fail", server.url("/flaky").absoluteString])
        #expect(run.status == ToolExit.serverError.rawValue)
        #expect(server.requests(for: "/flaky").count == 2)
    }

    @Test func retryTriesARefusedConnectionAgain() async throws {
        let port = try FTPTestServer.unusedPort()
        let run = try await CourierBinary.run(["--retry", "1", "--retry-delay", "0.1", "http://127.0.0.1:\(port)/"])
        #expect(run.status == ToolExit.connection.rawValue)
        #expect(run.stderr.contains("retrying in 0.1 s"), "\(run.stderr)")
    }

    // MARK: -C

    /// `/file` serves ``content``, honouring `Range: bytes=N-` unless `ranges` is false.
    static let content = patternBytes(200_000)

    static func rangeServer(ranges: Bool = true) throws -> FaultServer {
        try FaultServer(routes: ["/file": .handler { request in
            guard ranges, let range = request.header("Range"), range.hasPrefix("bytes="), range.hasSuffix("-"),
                  let offset = Int(range.dropFirst(6).dropLast()) else { return .ok(content) }
            guard offset < content.count else {
                return .ok(Data(), status: 416, reason: "Range Not Satisfiable", headers: [("Content-Range", "bytes */\(content.count)")])
            }
            return .ok(content.suffix(from: offset), status: 206, reason: "Partial Content",
                       headers: [("Content-Range", "bytes \(offset)-\(content.count - 1)/\(content.count)")])
        }])
    }

    @Test func continueAtResumesThePartialFile() async throws {
        let server = try Self.rangeServer()
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.file("part.bin")
        try Self.content.prefix(70_000).write(to: file)
        let run = try await CourierBinary.run(["-C", "-", "-o", file.path, server.url("/file").absoluteString])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(sameBytes(try Data(contentsOf: file), Self.content))
        #expect(server.requests(for: "/file").map { $0.header("Range") } == ["bytes=70000-"])
    }

    @Test func continueAtOnACompleteFileChangesNothing() async throws {
        let server = try Self.rangeServer()
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.file("whole.bin")
        try Self.content.write(to: file)
        let run = try await CourierBinary.run(["-C", "-", "-o", file.path, server.url("/file").absoluteString])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(sameBytes(try Data(contentsOf: file), Self.content))
    }

    @Test func continueAtFailsWhenTheServerIgnoresTheRange() async throws {
        let server = try Self.rangeServer(ranges: false)
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.file("part.bin")
        try Self.content.prefix(1000).write(to: file)
        let run = try await CourierBinary.run(["-C", "-", "-o", file.path, server.url("/file").absoluteString])
        #expect(run.status == ToolExit.serverError.rawValue)
        #expect(run.stderr.contains("cannot resume"), "\(run.stderr)")
        #expect(sameBytes(try Data(contentsOf: file), Self.content.prefix(1000)), "the part must stay as it was")
    }

    // MARK: -Z

    /// `/gate/N` answers only once `expected` requests are in at the same time (else, after 5 s, 504).
    static func gateServer(expected: Int) throws -> FaultServer {
        let arrived = Locked(0)
        return try FaultServer(fallback: .custom { request, writer in
            arrived.withLock { $0 += 1 }
            let deadline = Date().addingTimeInterval(5)
            while arrived.current < expected, Date() < deadline { usleep(5_000) }
            let together = arrived.current >= expected
            return writer.send(.ok(Data("\(request.path) \(together ? "together" : "alone")\n".utf8),
                                   status: together ? 200 : 504), method: request.method)
        })
    }

    @Test func parallelFetchesTheURLsConcurrently() async throws {
        let server = try Self.gateServer(expected: 3)
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let urls = (1...3).map { server.url("/gate/\($0)").absoluteString }
        let run = try await CourierBinary.run(["-Z", "--fail", "-o", directory.file("out").path] + urls)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try String(contentsOf: directory.file("out/3"), encoding: .utf8) == "/gate/3 together\n")
    }

    /// A server that counts the requests open at the same time and remembers the most it saw; each
    /// request is held until `hold` requests are open or half a second has passed.
    static func concurrencyServer(hold: Int) throws -> (FaultServer, Locked<(open: Int, peak: Int)>) {
        let counts = Locked((open: 0, peak: 0))
        let server = try FaultServer(fallback: .custom { request, writer in
            counts.withLock { $0.open += 1; $0.peak = max($0.peak, $0.open) }
            let deadline = Date().addingTimeInterval(0.5)
            while counts.current.open < hold, Date() < deadline { usleep(5_000) }
            let sent = writer.send(.ok(Data("\(request.path)\n".utf8)), method: request.method)
            counts.withLock { $0.open -= 1 }
            return sent
        })
        return (server, counts)
    }

    @Test func parallelMaxLimitsHowManyRunAtOnce() async throws {
        let (server, counts) = try Self.concurrencyServer(hold: 3)
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let urls = (1...4).map { server.url("/held/\($0)").absoluteString }
        let run = try await CourierBinary.run(["-Z", "--parallel-max", "2", "-w", "%{http_code} ", "-o", directory.file("out").path] + urls)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdoutText.split(separator: " ") == ["200", "200", "200", "200"])
        // Never more than two at once, and two at once at some point.
        #expect(counts.current.peak == 2)
    }
}
