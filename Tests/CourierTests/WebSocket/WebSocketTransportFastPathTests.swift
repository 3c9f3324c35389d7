import Foundation
import Testing
@testable import Courier

/// The transport's fast paths: a plain ws connection moves bytes with `send(2)`/`recv(2)` on its
/// socket and ends a read pass at a short read; a send from the app's thread goes straight to the
/// socket when nothing is queued. Against the Python `websockets` server (``WebSocketTestServer``).
@Suite("WebSocket transport fast paths", .serialized)
struct WebSocketTransportFastPathTests {
    /// An open echo connection (a ping answered) and its session, to invalidate when done.
    private func openEcho(secure: Bool) async throws -> (URLSession, URLSessionWebSocketTask) {
        let server = try await WebSocketTestServer.shared()
        let session = WebSocketTest.session(server: server)
        let task = session.webSocketTask(with: server.url("/echo", secure: secure))
        task.resume()
        try await withTimeout { try await task.sendPing() }
        return (session, task)
    }

    @Test(arguments: [false, true])
    func onlyAPlainConnectionUsesItsSocketDirectly(secure: Bool) async throws {
        let (session, task) = try await openEcho(secure: secure)
        defer { session.invalidateAndCancel() }
        let transport = try #require(task.link.withLock { $0.transport })
        #expect(transport.usesSocketDirectly == !secure)
    }

    @Test func manySmallMessagesInABurstAllArrive() async throws {
        let server = try await WebSocketTestServer.shared()
        let session = WebSocketTest.session(server: server)
        defer { session.invalidateAndCancel() }
        let count = 400, size = 100
        let task = session.webSocketTask(with: server.url("/flood?count=\(count)&size=\(size)"))
        task.resume()
        var total = 0
        for _ in 0..<count { total += WebSocketTest.data(try await WebSocketTest.receive(task))?.count ?? 0 }
        #expect(total == count * size)
    }

    @Test(arguments: [false, true])
    func sendsWhileALargeMessageIsWrittenKeepTheirOrder(secure: Bool) async throws {
        let (session, task) = try await openEcho(secure: secure)
        defer { session.invalidateAndCancel() }
        // The socket takes only part of 900 KiB at once: the loop writes the rest while the small
        // sends queue behind it.
        let large = Data((0..<(900 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        task.send(.data(large)) { _ in }
        for index in 0..<20 { task.send(.string("m\(index)")) { _ in } }
        var received: [String] = []
        for _ in 0..<21 {
            switch try await WebSocketTest.receive(task) {
            case .data(let data): received.append(data == large ? "large" : "wrong \(data.count) bytes")
            case .string(let text): received.append(text)
            @unknown default: received.append("?")
            }
        }
        #expect(received == ["large"] + (0..<20).map { "m\($0)" })
    }

    @Test func sendsRacingACloseEachCompleteOnce() async throws {
        let server = try await WebSocketTestServer.shared()
        let session = WebSocketTest.session(server: server)
        defer { session.invalidateAndCancel() }
        let completions = Locked<[Int: Int]>([:])
        let sendsPerTask = 50, tasks = 10
        for round in 0..<tasks {
            let task = session.webSocketTask(with: server.url("/echo"))
            task.resume()
            try await withTimeout { try await task.sendPing() }
            let sending = Thread {
                for index in 0..<sendsPerTask {
                    task.send(.string("s\(index)")) { _ in completions.withLock { $0[round * sendsPerTask + index, default: 0] += 1 } }
                }
            }
            sending.start()
            task.cancel(with: .normalClosure, reason: nil)
        }
        let total = tasks * sendsPerTask
        let allOnce = await waitUntil { completions.current.count == total }
        #expect(allOnce && completions.current.values.allSatisfy { $0 == 1 })
    }
}

/// `WebSocketRandomPool`: batched draws from the system's generator.
@Suite("WebSocket random pool")
struct WebSocketRandomPoolTests {
    @Test func drawsAcrossSeveralRefillsAreAllDifferent() {
        var pool = WebSocketRandomPool()
        let draws = (0..<(WebSocketRandomPool.batchSize * 5 + 3)).map { _ in pool.next() }
        #expect(Set(draws).count == draws.count)
    }

    @Test func twoPoolsDrawDifferentNumbers() {
        var first = WebSocketRandomPool(), second = WebSocketRandomPool()
        let a = (0..<8).map { _ in first.next() }
        let b = (0..<8).map { _ in second.next() }
        #expect(Set(a).isDisjoint(with: b))
    }
}
