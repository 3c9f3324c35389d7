// hummingbird-project/swift-websocket's client in the WebSocket benchmark: `WebSocketClient.connect`
// with its structured-concurrency handler (inbound message stream, outbound writer), the way that
// library is used, on a one-thread event-loop group.
import Foundation
import Logging
import NIOCore
import NIOPosix
import WSClient
import WSBenchSupport

let options = BenchOptions.parse()
let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let logger = Logger(label: "ws-bench-hummingbird")
let configuration = WebSocketClientConfiguration(maxFrameSize: max(options.size, 1 << 20) + 64)
let maxMessage = max(options.size, 1 << 20) + 64

/// Runs `body` on an open connection; returns once it returned and the connection closed.
func withConnection(_ body: @escaping @Sendable (WebSocketInboundStream, WebSocketOutboundWriter) async throws -> Void) async throws {
    try await WebSocketClient.connect(url: options.url, configuration: configuration, eventLoopGroup: group,
                                      logger: logger) { inbound, outbound, _ in
        try await body(inbound, outbound)
    }
}

func size(of message: WebSocketMessage?) -> Int {
    switch message {
    case .binary(let buffer): return buffer.readableBytes
    case .text(let string): return string.utf8.count
    case nil: return -1
    }
}

func roundTrips() async throws {
    let payload = ByteBuffer(bytes: options.payload)
    try await withConnection { inbound, outbound in
        var messages = inbound.messages(maxSize: maxMessage).makeAsyncIterator()
        func one() async throws {
            try await outbound.write(.binary(payload))
            let echo = try await messages.next()
            guard size(of: echo) == options.size else { benchFailed("echo of \(size(of: echo)) bytes") }
        }
        for _ in 0..<options.warmup { try await one() }
        let start = benchNow()
        for _ in 0..<options.count { try await one() }
        reportRoundTrips(count: options.count, seconds: benchNow() - start)
    }
}

func throughput() async throws {
    let payload = ByteBuffer(bytes: options.payload)
    let count = options.count
    try await withConnection { inbound, outbound in
        var messages = inbound.messages(maxSize: maxMessage).makeAsyncIterator()
        let start = benchNow()
        for _ in 0..<min(options.window, count) { try await outbound.write(.binary(payload)) }
        for index in 0..<count {
            let echo = try await messages.next()
            guard size(of: echo) == options.size else { benchFailed("echo of \(size(of: echo)) bytes") }
            if index + options.window < count { try await outbound.write(.binary(payload)) }
        }
        reportThroughput(count: count, size: options.size, seconds: benchNow() - start)
    }
}

func idle() async throws {
    let baseline = statusKiB("VmRSS")
    let (opened, signal) = AsyncStream<Bool>.makeStream()
    var events = opened.makeAsyncIterator()
    var index = 0
    // At most 100 handshakes at a time, as for every client.
    while index < options.count {
        let batch = min(100, options.count - index)
        for _ in 0..<batch {
            Task {
                do {
                    try await withConnection { inbound, _ in
                        signal.yield(true)
                        for try await _ in inbound {}
                    }
                } catch {
                    signal.yield(false)
                }
            }
        }
        for _ in 0..<batch {
            guard await events.next() == true else { benchFailed("a connection failed") }
        }
        index += batch
    }
    reportIdle(count: options.count, baselineKiB: baseline)
}

do {
    switch options.measurement {
    case "round-trips": try await roundTrips()
    case "throughput": try await throughput()
    case "handshakes": benchFailed("handshakes are measured for Courier only")
    default: try await idle()
    }
} catch {
    benchFailed("\(error)")
}
exit(0)
