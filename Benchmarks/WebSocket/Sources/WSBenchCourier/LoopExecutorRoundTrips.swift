// The round-trip measurement run inside Courier's loop task executor (`URLSession.loopTaskExecutor`,
// Courier's addition): `ws-bench-courier round-trips` with WS_BENCH_EXECUTOR=loop in the environment
// (websocket-part.sh's `courier-loop` client). A function of its own file, so that it is nonisolated
// (the executor preference does not apply to actor-isolated code, and main.swift's top level runs
// on the main actor).
import Courier
import Foundation
import WSBenchSupport

/// Whether the round trips run on the session's loop thread (WS_BENCH_EXECUTOR=loop).
let roundTripsUseLoopExecutor = ProcessInfo.processInfo.environment["WS_BENCH_EXECUTOR"] == "loop"

/// `warmup` round trips, then `count` timed ones, of `message` on `task`, all inside
/// `withTaskExecutorPreference(session.loopTaskExecutor)`: the seconds the timed ones took.
func loopExecutorRoundTrips(session: URLSession, task: URLSessionWebSocketTask, message: URLSessionWebSocketTask.Message,
                            size: Int, warmup: Int, count: Int) async throws -> Double {
    try await withTaskExecutorPreference(session.loopTaskExecutor) {
        func one() async throws {
            try await task.send(message)
            let echo = try await task.receive()
            guard case .data(let data) = echo, data.count == size else { benchFailed("echo of the wrong size") }
        }
        for _ in 0..<warmup { try await one() }
        let start = benchNow()
        for _ in 0..<count { try await one() }
        return benchNow() - start
    }
}
