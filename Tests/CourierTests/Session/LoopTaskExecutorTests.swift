import Foundation
import Testing
@testable import Courier

/// `URLSession.loopTaskExecutor`: Swift tasks on the session's I/O loop thread.
@Suite("Loop task executor", .serialized)
struct LoopTaskExecutorTests {
    /// A session of its own (no proxy, no cache), for one test.
    private static func session() -> URLSession {
        WebSocketTest.session()
    }

    /// The calling thread's name as the system shows it.
    private static func threadName() -> String {
        let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        return name.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Where a job ran: on the executor's loop thread, and under which name.
    private struct Place: Sendable, Equatable {
        var onLoop: Bool
        var name: String
    }

    private static func place(_ executor: URLSessionLoopTaskExecutor) -> Place {
        Place(onLoop: executor.loop?.isLoopThread ?? false, name: threadName())
    }

    @Test func runsOnTheLoopThreadItStartsForAFreshSession() async throws {
        let session = Self.session()
        defer { session.invalidateAndCancel() }
        let executor = session.loopTaskExecutor
        let place = try await withTimeout {
            await withTaskExecutorPreference(executor) { Self.place(executor) }
        }
        #expect(place == Place(onLoop: true, name: "courier.curl"))
    }

    @Test func isTheSameExecutorEveryTime() {
        let session = Self.session()
        defer { session.invalidateAndCancel() }
        #expect(session.loopTaskExecutor === session.loopTaskExecutor)
    }

    @Test func runsJobsFirstInFirstOut() async throws {
        let session = Self.session()
        defer { session.invalidateAndCancel() }
        let executor = session.loopTaskExecutor
        let order = Locked<[Int]>([])
        let tasks = (0..<1000).map { index in
            Task(executorPreference: executor) { order.withLock { $0.append(index) } }
        }
        try await withTimeout { for task in tasks { await task.value } }
        #expect(order.current == Array(0..<1000))
    }

    @Test func tenThousandTasksComplete() async throws {
        let session = Self.session()
        defer { session.invalidateAndCancel() }
        let executor = session.loopTaskExecutor
        let total = try await withTimeout {
            await withTaskGroup(of: Int.self) { group in
                for _ in 0..<10_000 {
                    group.addTask(executorPreference: executor) {
                        await Task.yield()
                        return executor.loop?.isLoopThread == true ? 1 : 0
                    }
                }
                return await group.reduce(0, +)
            }
        }
        #expect(total == 10_000)
    }

    @Test func restartsTheLoopThreadAfterItEndedIdle() async throws {
        let session = Self.session()
        defer { session.invalidateAndCancel() }
        let executor = session.loopTaskExecutor
        _ = try await withTimeout { await Task(executorPreference: executor) { 1 }.value }
        // Longer than the loop's idle linger: its thread ends, and the next job starts another.
        await settle(Double(CurlMultiLoop.idleLinger) / 1000 * 3)
        let place = try await withTimeout { await Task(executorPreference: executor) { Self.place(executor) }.value }
        #expect(place == Place(onLoop: true, name: "courier.curl"))
    }

    @Test func aJobAfterInvalidateAndCancelStillRuns() async throws {
        let session = Self.session()
        let executor = session.loopTaskExecutor
        _ = try await withTimeout { await Task(executorPreference: executor) { 1 }.value }
        session.invalidateAndCancel()
        let values = try await withTimeout {
            await withTaskGroup(of: Int.self) { group in
                for index in 0..<100 { group.addTask(executorPreference: executor) { index } }
                return await group.reduce(0, +)
            }
        }
        #expect(values == (0..<100).reduce(0, +))
    }

    @Test func aTaskSuspendedWhileTheSessionIsInvalidatedResumes() async throws {
        let session = Self.session()
        let executor = session.loopTaskExecutor
        let waiting = Task(executorPreference: executor) { () -> Int in
            try? await Task.sleep(nanoseconds: 300_000_000)
            await Task.yield()
            return 7
        }
        try await Task.sleep(nanoseconds: 50_000_000)
        session.invalidateAndCancel()
        #expect(try await withTimeout { await waiting.value } == 7)
    }

    @Test func jobsQueuedFromManyThreadsWhileTheSessionIsInvalidatedAllRun() async throws {
        var completed = 0
        for _ in 0..<20 {
            let session = Self.session()
            let executor = session.loopTaskExecutor
            completed += try await withTimeout {
                await withTaskGroup(of: Int.self) { group in
                    // Four threads of the global executor queue jobs while a fifth invalidates.
                    for _ in 0..<4 {
                        group.addTask {
                            let tasks = (0..<50).map { _ in
                                Task(executorPreference: executor) { () -> Int in
                                    await Task.yield()
                                    return 1
                                }
                            }
                            var sum = 0
                            for task in tasks { sum += await task.value }
                            return sum
                        }
                    }
                    group.addTask {
                        session.invalidateAndCancel()
                        return 0
                    }
                    return await group.reduce(0, +)
                }
            }
        }
        #expect(completed == 20 * 4 * 50)
    }

    @Test func anInvalidatedSessionsExecutorRunsJobsElsewhere() async throws {
        let session = Self.session()
        session.invalidateAndCancel()
        let executor = session.loopTaskExecutor
        let place = try await withTimeout { await Task(executorPreference: executor) { Self.place(executor) }.value }
        #expect(place.onLoop == false && executor.loop == nil)
    }

    @Test func nestedPreferencesRunOnTheInnerLoopAndComeBack() async throws {
        let outerSession = Self.session()
        let innerSession = Self.session()
        defer {
            outerSession.invalidateAndCancel()
            innerSession.invalidateAndCancel()
        }
        let outer = outerSession.loopTaskExecutor
        let inner = innerSession.loopTaskExecutor
        let seen = try await withTimeout {
            await withTaskExecutorPreference(outer) { () -> [Bool] in
                var seen = [Self.place(outer).onLoop]
                await withTaskExecutorPreference(inner) {
                    seen.append(Self.place(inner).onLoop && !Self.place(outer).onLoop)
                    await withTaskExecutorPreference(outer) { seen.append(Self.place(outer).onLoop) }
                    await Task.yield()
                    seen.append(Self.place(inner).onLoop)
                }
                await Task.yield()
                seen.append(Self.place(outer).onLoop)
                return seen
            }
        }
        #expect(seen == [true, true, true, true, true])
    }

    @Test func aWebSocketEchoLoopRunsOnTheLoopThread() async throws {
        let server = try await WebSocketTestServer.shared()
        let session = Self.session()
        defer { session.invalidateAndCancel() }
        let executor = session.loopTaskExecutor
        let task = session.webSocketTask(with: server.url("/echo"))
        task.resume()
        let (echoed, offLoop) = try await withTimeout {
            try await withTaskExecutorPreference(executor) { () throws -> (Int, Int) in
                var echoed = 0
                var offLoop = 0
                for index in 0..<500 {
                    let payload = Data((0..<1024).map { UInt8(truncatingIfNeeded: $0 &+ index) })
                    try await task.send(.data(payload))
                    let echo = try await task.receive()
                    if WebSocketTest.data(echo) == payload { echoed += 1 }
                    if !Self.place(executor).onLoop { offLoop += 1 }
                }
                return (echoed, offLoop)
            }
        }
        task.cancel(with: .normalClosure, reason: nil)
        #expect(echoed == 500 && offLoop == 0)
    }

    @Test func busyJobsDoNotStarveTheSessionsConnections() async throws {
        let server = try await WebSocketTestServer.shared()
        let session = Self.session()
        defer { session.invalidateAndCancel() }
        let executor = session.loopTaskExecutor
        let stop = Locked(false)
        // Tasks that queue themselves again and again: the loop's job queue never empties.
        let spinners = (0..<4).map { _ in
            Task(executorPreference: executor) { while !stop.current { await Task.yield() } }
        }
        defer { stop.withLock { $0 = true } }
        let task = session.webSocketTask(with: server.url("/echo"))
        task.resume()
        let echoes = try await withTimeout {
            var echoes = 0
            for index in 0..<20 {
                try await task.send(.string("message \(index)"))
                if WebSocketTest.text(try await task.receive()) == "message \(index)" { echoes += 1 }
            }
            return echoes
        }
        stop.withLock { $0 = true }
        for spinner in spinners { try await withTimeout { await spinner.value } }
        task.cancel(with: .normalClosure, reason: nil)
        #expect(echoes == 20)
    }
}
