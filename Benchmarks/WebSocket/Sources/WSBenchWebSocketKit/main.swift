// vapor/websocket-kit's client in the WebSocket benchmark: `WebSocket.connect` and its callbacks
// (`onBinary`, `send`), the way that library is used, on a one-thread event-loop group.
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import WebSocketKit
import WSBenchSupport

let options = BenchOptions.parse()
let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let configuration = WebSocketClient.Configuration(maxFrameSize: max(options.size, 1 << 20) + 64)

/// Connects; `onUpgrade` runs with the open connection.
func connect(_ onUpgrade: @escaping @Sendable (WebSocket) -> Void) -> EventLoopFuture<Void> {
    WebSocket.connect(to: options.url, configuration: configuration, on: group, onUpgrade: onUpgrade)
}

/// Runs `body` on an open connection and waits until it fulfils the promise it is given.
func withConnection(_ body: @escaping @Sendable (WebSocket, EventLoopPromise<Void>) -> Void) throws {
    let done = group.next().makePromise(of: Void.self)
    connect { ws in body(ws, done) }.whenFailure { done.fail($0) }
    try done.futureResult.wait()
}

func roundTrips() throws {
    let payload = options.payload
    let total = options.warmup + options.count
    let state = NIOLockedValueBox((done: 0, start: 0.0))
    try withConnection { ws, done in
        ws.onBinary { ws, buffer in
            guard buffer.readableBytes == options.size else { benchFailed("echo of \(buffer.readableBytes) bytes") }
            let finished: Bool = state.withLockedValue {
                $0.done += 1
                if $0.done == options.warmup { $0.start = benchNow() }
                return $0.done == total
            }
            if finished { done.succeed() } else { ws.send(payload) }
        }
        if options.warmup == 0 { state.withLockedValue { $0.start = benchNow() } }
        ws.send(payload)
    }
    reportRoundTrips(count: options.count, seconds: benchNow() - state.withLockedValue { $0.start })
}

func throughput() throws {
    let payload = options.payload
    let count = options.count
    let received = NIOLockedValueBox(0)
    let start = benchNow()
    try withConnection { ws, done in
        ws.onBinary { ws, buffer in
            guard buffer.readableBytes == options.size else { benchFailed("echo of \(buffer.readableBytes) bytes") }
            let index = received.withLockedValue { $0 += 1; return $0 }
            if index == count { done.succeed() } else if index + options.window <= count { ws.send(payload) }
        }
        for _ in 0..<min(options.window, count) { ws.send(payload) }
    }
    reportThroughput(count: count, size: options.size, seconds: benchNow() - start)
}

func idle() throws {
    let baseline = statusKiB("VmRSS")
    let sockets = NIOLockedValueBox<[WebSocket]>([])
    var index = 0
    // At most 100 handshakes at a time, as for every client.
    while index < options.count {
        let batch = min(100, options.count - index)
        let opened = (0..<batch).map { _ in
            let ponged = group.next().makePromise(of: Void.self)
            connect { ws in
                sockets.withLockedValue { $0.append(ws) }
                ws.onPong { _, _ in ponged.succeed() }
                ws.sendPing()
            }.whenFailure { ponged.fail($0) }
            return ponged.futureResult
        }
        try EventLoopFuture.andAllSucceed(opened, on: group.next()).wait()
        index += batch
    }
    reportIdle(count: options.count, baselineKiB: baseline)
}

do {
    switch options.measurement {
    case "round-trips": try roundTrips()
    case "throughput": try throughput()
    case "handshakes": benchFailed("handshakes are measured for Courier only")
    default: try idle()
    }
} catch {
    benchFailed("\(error)")
}
exit(0)
