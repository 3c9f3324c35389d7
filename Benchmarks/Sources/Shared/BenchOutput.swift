// Output lines and measuring helpers of the benchmark (see Bench.swift).

#if USE_COURIER
import Courier
#else
import FoundationNetworking
#endif
import Foundation
import Dispatch
import Synchronization

// MARK: - Output and measuring helpers

#if USE_COURIER
let implementation = "courier"
#else
let implementation = "foundation"
#endif

/// Writes one line to standard output, unbuffered, so that lines survive a crash that follows.
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func result(_ name: String, _ value: String, _ unit: String) {
    emit("RESULT \(name) \(value) \(unit)")
}

func result(_ name: String, _ value: Double, _ unit: String, decimals: Int = 1) {
    result(name, String(format: "%.\(decimals)f", value), unit)
}

func note(_ text: String) {
    emit("NOTE [\(implementation)] \(text)")
}

/// Monotonic nanoseconds.
func now() -> UInt64 {
    DispatchTime.now().uptimeNanoseconds
}

/// Peak resident set size of this process (VmHWM in /proc/self/status), in bytes.
func peakRSS() -> Int {
    statusField("VmHWM:")
}

/// Current resident set size of this process (VmRSS in /proc/self/status), in bytes.
func currentRSS() -> Int {
    statusField("VmRSS:")
}

func statusField(_ field: String) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix(field) {
        let parts = line.split(separator: " ", omittingEmptySubsequences: true)
        if parts.count >= 2, let kB = Int(parts[1]) { return kB * 1024 }
    }
    return 0
}

func describe(_ error: any Error) -> String {
    let ns = error as NSError
    return "\(ns.domain) \(ns.code): \(ns.localizedDescription)"
}

/// True for URLError.unsupportedURL (NSURLErrorDomain -1002): the implementation has no protocol
/// for the scheme. Any other error is a failure, not a missing feature.
func isUnsupportedURL(_ message: String) -> Bool {
    message.hasPrefix("\(NSURLErrorDomain) \(NSURLErrorUnsupportedURL):")
}

/// Thread-safe tallies filled in by completion handlers and delegate callbacks.
final class Tally: Sendable {
    struct State {
        var completed = 0
        var failed = 0
        var bytes = 0
        var firstError: String?
        var downloadedSize: Int?
        var movedTo: URL?
        var finishedAt: UInt64 = 0
    }

    let state = Mutex(State())

    func succeeded(bytes: Int) {
        state.withLock {
            $0.completed += 1
            $0.bytes += bytes
        }
    }

    func failed(_ message: String) {
        state.withLock {
            $0.completed += 1
            $0.failed += 1
            if $0.firstError == nil { $0.firstError = message }
        }
    }

    var snapshot: State { state.withLock { $0 } }
}
