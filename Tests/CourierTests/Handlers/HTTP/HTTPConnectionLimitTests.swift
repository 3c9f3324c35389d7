import Foundation
import Testing
@testable import Courier

/// `httpMaximumConnectionsPerHost` against a real HTTP/1.1 server: the in-process ``FaultServer``
/// holds every request for a moment and counts how many it is answering at once, so the limit is
/// seen from the server's side of the sockets, not from Courier's own bookkeeping.
@Suite("HTTP connections per host")
struct HTTPConnectionLimitTests {
    /// Requests the server is answering right now, and the most it answered at once.
    final class Concurrency: @unchecked Sendable {
        private let state = Locked((now: 0, most: 0))
        func enter() { state.withLock { $0.now += 1; $0.most = max($0.most, $0.now) } }
        func leave() { state.withLock { $0.now -= 1 } }
        var most: Int { state.withLock { $0.most } }
    }

    /// A server whose `/hold` answers each request after `seconds`, counting concurrent requests.
    private func holdingServer(seconds: Double, _ concurrency: Concurrency) throws -> FaultServer {
        try FaultServer(routes: ["/hold": .handler { request in
            concurrency.enter()
            defer { concurrency.leave() }
            Thread.sleep(forTimeInterval: seconds)
            return .ok(Data("held \(request.target)\n".utf8))
        }])
    }

    /// Starts `count` data tasks for `/hold` at once and waits for all of them (bounded).
    /// What one task ended with.
    struct Outcome {
        var error: (any Error)?
        var status: Int?
        var body: Data
    }

    private func loadConcurrently(_ count: Int, from server: FaultServer, limit: Int?) async throws -> [Outcome] {
        let delegate = EventDelegate()
        let session = HTTPTest.session(delegate: delegate) { configuration in
            if let limit { configuration.httpMaximumConnectionsPerHost = limit }
        }
        defer { session.finishTasksAndInvalidate() }
        let tasks = (0..<count).map { session.dataTask(with: server.url("/hold?n=\($0)")) }
        for task in tasks { task.resume() }
        for task in tasks {
            guard await delegate.waitForCompletion(of: task, timeout: 20) else {
                tasks.forEach { $0.cancel() }
                throw TestTimeout(what: "task \(task.taskIdentifier) of \(count) concurrent loads")
            }
        }
        return tasks.map {
            Outcome(error: delegate.error(of: $0), status: (delegate.response(of: $0) as? HTTPURLResponse)?.statusCode,
                    body: delegate.body(of: $0))
        }
    }

    @Test("a limit of 2 keeps 8 concurrent tasks to 2 connections, and every task still loads")
    func limitOfTwoIsHonoured() async throws {
        let concurrency = Concurrency()
        let server = try holdingServer(seconds: 0.15, concurrency)
        defer { server.stop() }
        let outcomes = try await loadConcurrently(8, from: server, limit: 2)
        for (index, outcome) in outcomes.enumerated() {
            #expect(outcome.error == nil, "task \(index): \(String(describing: outcome.error))")
            #expect(outcome.status == 200)
            #expect(outcome.body == Data("held /hold?n=\(index)\n".utf8))
        }
        #expect(concurrency.most <= 2, "the server answered \(concurrency.most) requests at once")
        #expect(server.acceptedConnections <= 2, "\(server.acceptedConnections) connections were opened")
        #expect(server.requests(for: "/hold").count == 8)
    }

    @Test("the default (6) lets more than 2 requests run at once — the server can see concurrency")
    func defaultLimitAllowsConcurrency() async throws {
        let concurrency = Concurrency()
        let server = try holdingServer(seconds: 0.3, concurrency)
        defer { server.stop() }
        #expect(URLSessionConfiguration.ephemeral.httpMaximumConnectionsPerHost == 6)
        let outcomes = try await loadConcurrently(8, from: server, limit: nil)
        #expect(outcomes.allSatisfy { $0.error == nil && $0.status == 200 })
        #expect(concurrency.most > 2, "only \(concurrency.most) requests ran at once")
        #expect(concurrency.most <= 6, "the server answered \(concurrency.most) requests at once")
        #expect(server.acceptedConnections <= 6)
    }
}
