// Courier's client in the WebSocket benchmark: URLSessionWebSocketTask with Apple's async API, as an
// app written for FoundationNetworking would use it. With WS_BENCH_EXECUTOR=loop, the round trips run
// inside Courier's loop task executor instead (LoopExecutorRoundTrips.swift).
import Courier
import Foundation
import WSBenchSupport

let options = BenchOptions.parse()
guard let url = URL(string: options.url) else { benchFailed("bad URL \(options.url)") }
let configuration = URLSessionConfiguration.default
configuration.httpMaximumConnectionsPerHost = 100_000
let session = URLSession(configuration: configuration, delegate: options.user.isEmpty ? nil : BenchCredentialDelegate(options.user),
                         delegateQueue: nil)

/// A connection that has answered a ping (so it is open).
func openTask() async throws -> URLSessionWebSocketTask {
    let task = session.webSocketTask(with: url)
    task.maximumMessageSize = max(options.size, 1 << 20)
    task.resume()
    try await task.sendPing()
    return task
}

func size(of message: URLSessionWebSocketTask.Message) -> Int {
    switch message {
    case .data(let data): return data.count
    case .string(let string): return string.utf8.count
    @unknown default: return -1
    }
}

func roundTrips() async throws {
    let task = try await openTask()
    let message = URLSessionWebSocketTask.Message.data(Data(options.payload))
    func one() async throws {
        try await task.send(message)
        let echo = try await task.receive()
        guard size(of: echo) == options.size else { benchFailed("echo of \(size(of: echo)) bytes") }
    }
    if roundTripsUseLoopExecutor {
        let seconds = try await loopExecutorRoundTrips(session: session, task: task, message: message, size: options.size,
                                                       warmup: options.warmup, count: options.count)
        reportRoundTrips(count: options.count, seconds: seconds)
        task.cancel(with: .normalClosure, reason: nil)
        return
    }
    for _ in 0..<options.warmup { try await one() }
    let start = benchNow()
    for _ in 0..<options.count { try await one() }
    reportRoundTrips(count: options.count, seconds: benchNow() - start)
    task.cancel(with: .normalClosure, reason: nil)
}

func throughput() async throws {
    let task = try await openTask()
    let message = URLSessionWebSocketTask.Message.data(Data(options.payload))
    let count = options.count
    let start = benchNow()
    // The receiver sends the next message for each echo it takes, so at most `window` are in flight.
    async let received: Void = {
        for index in 0..<count {
            let echo = try await task.receive()
            guard size(of: echo) == options.size else { benchFailed("echo of \(size(of: echo)) bytes") }
            if index + options.window < count { try await task.send(message) }
        }
    }()
    for _ in 0..<min(options.window, count) { try await task.send(message) }
    try await received
    reportThroughput(count: count, size: options.size, seconds: benchNow() - start)
    task.cancel(with: .normalClosure, reason: nil)
}

func idle() async throws {
    let baseline = statusKiB("VmRSS")
    let tasks = try await withThrowingTaskGroup(of: URLSessionWebSocketTask.self) { group in
        var opened: [URLSessionWebSocketTask] = []
        for index in 0..<options.count {
            // At most 100 handshakes at a time, as for every client.
            if index >= 100, let task = try await group.next() { opened.append(task) }
            group.addTask { try await openTask() }
        }
        for try await task in group { opened.append(task) }
        return opened
    }
    reportIdle(count: tasks.count, baselineKiB: baseline)
    withExtendedLifetime(tasks) {}
}

/// Opens and closes `count` connections one after another (the handshake and its authentication,
/// a ping answered, the close handshake), after 10 not counted.
func handshakes() async throws {
    func one() async throws {
        let task = try await openTask()
        task.cancel(with: .normalClosure, reason: nil)
    }
    for _ in 0..<10 { try await one() }
    let start = benchNow()
    for _ in 0..<options.count { try await one() }
    reportHandshakes(count: options.count, seconds: benchNow() - start)
}

do {
    switch options.measurement {
    case "round-trips": try await roundTrips()
    case "throughput": try await throughput()
    case "handshakes": try await handshakes()
    default: try await idle()
    }
} catch {
    benchFailed("\(error)")
}
exit(0)
