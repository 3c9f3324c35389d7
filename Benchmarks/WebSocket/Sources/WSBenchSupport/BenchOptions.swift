// What every WebSocket benchmark client takes and measures.
//
// Usage: ws-bench-<client> <measurement> --url ws://127.0.0.1:PORT/ [options]
//   round-trips  [--count N]               1 KiB binary messages echoed one after another on one
//                                          connection (after --warmup N not counted): round trips/s
//   throughput   [--count N] [--window N]  1 MiB binary messages echoed, at most --window in flight
//                                          on one connection: MB/s (10^6 bytes, each message once)
//   idle         [--count N]               N connections opened (each answered a ping) and held:
//                                          peak RSS and KiB per connection ((RSS after − RSS
//                                          before) ÷ N)
//   handshakes   [--count N] [--user U:P]  N connections opened (handshake, a ping answered) and
//                                          closed one after another, a 401 answered with U:P (any
//                                          scheme the server offers; for Negotiate the credential
//                                          only says "answer": the ambient Kerberos ticket is used):
//                                          handshakes/s. Courier's client only
//                                          (Benchmarks/websocket-auth-part.sh)
// Output: `RESULT <name> <value> <unit>` lines on standard output (Benchmarks/run.sh's format).
import Foundation

/// The measurement and its parameters, from the command line.
public struct BenchOptions: Sendable {
    /// `round-trips`, `throughput`, `idle` or `handshakes`.
    public var measurement: String
    /// The echo server.
    public var url: String
    /// Messages (or connections, for `idle`).
    public var count: Int
    /// Round trips before the measured ones.
    public var warmup: Int
    /// Messages in flight at most (`throughput`).
    public var window: Int
    /// Bytes per message.
    public var size: Int
    /// `user:password` for the server's 401 (`handshakes`), empty for none.
    public var user = ""

    /// Reads the options; exits with a usage line when they are wrong.
    public static func parse(_ arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> BenchOptions {
        guard let measurement = arguments.first else { usage() }
        var options = BenchOptions(measurement: measurement, url: "", count: 0, warmup: 200, window: 4, size: 0)
        var index = 1
        while index + 1 < arguments.count {
            let value = arguments[index + 1]
            switch arguments[index] {
            case "--url": options.url = value
            case "--count": options.count = Int(value) ?? 0
            case "--warmup": options.warmup = Int(value) ?? 0
            case "--window": options.window = max(1, Int(value) ?? 1)
            case "--size": options.size = Int(value) ?? 0
            case "--user": options.user = value
            default: usage()
            }
            index += 2
        }
        switch measurement {
        case "round-trips":
            if options.count == 0 { options.count = 20_000 }
            if options.size == 0 { options.size = 1024 }
        case "throughput":
            if options.count == 0 { options.count = 256 }
            if options.size == 0 { options.size = 1 << 20 }
        case "idle":
            if options.count == 0 { options.count = 1000 }
        case "handshakes":
            if options.count == 0 { options.count = 200 }
        default:
            usage()
        }
        guard !options.url.isEmpty, options.count > 0 else { usage() }
        return options
    }

    private static func usage() -> Never {
        FileHandle.standardError.write(Data("usage: ws-bench-<client> round-trips|throughput|idle|handshakes --url URL [--count N] [--warmup N] [--window N] [--size BYTES] [--user U:P]\n".utf8))
        exit(2)
    }

    /// The message every client sends: `size` bytes of a fixed pattern.
    public var payload: [UInt8] { (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) } }
}

/// Writes one result line, unbuffered.
public func emitResult(_ name: String, _ value: Double, _ unit: String) {
    FileHandle.standardOutput.write(Data("RESULT \(name) \(String(format: "%.1f", value)) \(unit)\n".utf8))
}

/// Reports a failed measurement and exits non-zero.
public func benchFailed(_ message: String) -> Never {
    FileHandle.standardOutput.write(Data("RESULT failed 0 none\n".utf8))
    FileHandle.standardError.write(Data("failed: \(message)\n".utf8))
    exit(1)
}

/// Monotonic seconds.
public func benchNow() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// A field of /proc/self/status in KiB (`VmRSS`, `VmHWM`); 0 when it cannot be read.
public func statusKiB(_ field: String) -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
    return 0
}

/// Reports the round-trip rate of `count` round trips that took `seconds`.
public func reportRoundTrips(count: Int, seconds: Double) {
    emitResult("round-trips", Double(count) / seconds, "per-second")
}

/// Reports the throughput of `count` messages of `size` bytes echoed in `seconds`.
public func reportThroughput(count: Int, size: Int, seconds: Double) {
    emitResult("throughput", Double(count) * Double(size) / seconds / 1e6, "MB/s")
}

/// Reports the rate of `count` handshakes (each connection opened, pinged and closed) in `seconds`.
public func reportHandshakes(count: Int, seconds: Double) {
    emitResult("handshakes", Double(count) / seconds, "per-second")
}

/// Reports the idle measurement: `baseline` was the RSS (KiB) before the `count` connections
/// opened; waits a moment for the connections to settle first.
public func reportIdle(count: Int, baselineKiB: Int) {
    Thread.sleep(forTimeInterval: 1)
    let rss = statusKiB("VmRSS")
    emitResult("idle-peak-rss", Double(statusKiB("VmHWM")), "KiB")
    emitResult("idle-per-connection", Double(rss - baselineKiB) / Double(count), "KiB")
}
