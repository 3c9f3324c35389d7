import Courier
import Foundation

/// The progress meter on standard error: one line, rewritten in place, summing every running
/// transfer of the run.
///
/// It is shown only when standard error is a terminal, `-s` is not given and the bodies do not go
/// to the same terminal on standard output (curl's rule: the meter would tear the body apart), and
/// only for long transfers: nothing is drawn before ``delay`` has passed, so quick runs print
/// nothing. The line is ended with a newline when the last transfer ends.
final class ProgressMeter: Sendable {
    /// One transfer's counts, reported by its delegate.
    final class Slot: Sendable {
        fileprivate let meter: ProgressMeter
        fileprivate let id: Int

        fileprivate init(meter: ProgressMeter, id: Int) {
            self.meter = meter
            self.id = id
        }

        /// The body is expected to be `length` bytes long (negative: unknown).
        func expect(_ length: Int64) { meter.update(id) { $0.expected = length } }
        /// `count` more body bytes arrived.
        func received(_ count: Int64) { meter.update(id) { $0.received += count } }
        /// `total` of `expected` request-body bytes are sent.
        func sent(_ total: Int64, of expected: Int64) {
            meter.update(id) { $0.sent = total; $0.expectedToSend = expected }
        }
        /// The transfer ended.
        func end() { meter.finish(id) }
    }

    /// One transfer's counts.
    struct Counts: Sendable {
        var expected: Int64 = -1
        var received: Int64 = 0
        var expectedToSend: Int64 = -1
        var sent: Int64 = 0
    }

    private struct State {
        var running: [Int: Counts] = [:]
        var done = Counts(expected: 0, expectedToSend: 0)
        var nextID = 0
        var drawn = false
        var timer: (any DispatchSourceTimer)?
    }

    /// How long the run must have lasted before the meter is drawn.
    static let delay: TimeInterval = 0.5
    /// How often the line is redrawn.
    static let interval: TimeInterval = 0.25

    private let state = Locked(State())
    private let started = ContinuousClock.now
    private let write: @Sendable (String) -> Void

    /// A meter writing its line through `write` (standard error by default).
    init(write: @escaping @Sendable (String) -> Void = { text in
        try? FileHandle.standardError.write(contentsOf: Data(text.utf8))
    }) {
        self.write = write
    }

    /// Whether the meter is shown: standard error is a terminal, not `-s`, and the bodies do not
    /// go to a terminal on standard output.
    static func isWanted(silent: Bool, bodiesToStandardOutput: Bool,
                         stderrIsTerminal: Bool = isatty(STDERR_FILENO) == 1,
                         stdoutIsTerminal: Bool = isatty(STDOUT_FILENO) == 1) -> Bool
    {
        stderrIsTerminal && !silent && !(bodiesToStandardOutput && stdoutIsTerminal)
    }

    /// Starts a slot for a new transfer; the first one starts the redraw timer.
    func begin() -> Slot {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            state.running[state.nextID] = Counts()
            if state.timer == nil {
                let timer = DispatchSource.makeTimerSource(queue: .global())
                timer.schedule(deadline: .now() + Self.delay, repeating: Self.interval)
                timer.setEventHandler { [weak self] in self?.draw() }
                timer.resume()
                state.timer = timer
            }
            return state.nextID
        }
        return Slot(meter: self, id: id)
    }

    /// Stops the timer and ends the line, if one was drawn. Call once, when the run ends.
    func close() {
        let (timer, drawn) = state.withLock { state in
            defer { state.timer = nil }
            return (state.timer, state.drawn)
        }
        timer?.cancel()
        if drawn {
            draw(final: true)
            write("\n")
        }
    }

    private func update(_ id: Int, _ change: (inout Counts) -> Void) {
        state.withLock { state in
            guard var counts = state.running[id] else { return }
            change(&counts)
            state.running[id] = counts
        }
    }

    private func finish(_ id: Int) {
        state.withLock { state in
            guard let counts = state.running.removeValue(forKey: id) else { return }
            state.done.received += counts.received
            state.done.expected += max(counts.expected, counts.received)
            state.done.sent += counts.sent
            state.done.expectedToSend += max(counts.expectedToSend, counts.sent)
        }
    }

    private func draw(final: Bool = false) {
        let (line, show) = state.withLock { state -> (String, Bool) in
            var total = state.done
            var unknown = false
            for counts in state.running.values {
                total.received += counts.received
                total.sent += counts.sent
                if counts.expected < 0 { unknown = true } else { total.expected += counts.expected }
                total.expectedToSend += max(counts.expectedToSend, 0)
            }
            if unknown { total.expected = -1 }
            let elapsed = ContinuousClock.now - started
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let line = Self.line(total, seconds: seconds, transfers: state.running.count)
            let show = final || state.timer != nil
            if show { state.drawn = true }
            return (line, show)
        }
        if show { write("\r" + line) }
    }

    /// The meter's text for `counts` after `seconds`:
    /// `  45.0%   12.0 MiB of 26.7 MiB   3.2 MiB/s   0:00:05 left   1 transfer`.
    static func line(_ counts: Counts, seconds: Double, transfers: Int) -> String {
        let uploading = counts.sent > 0 && counts.received == 0
        let done = uploading ? counts.sent : counts.received
        let total = uploading ? counts.expectedToSend : counts.expected
        let rate = seconds > 0 ? Double(done) / seconds : 0
        var parts: [String] = []
        if total > 0 {
            parts.append(String(format: "%5.1f%%", min(100, Double(done) * 100 / Double(total))))
            parts.append("\(size(done)) of \(size(total))")
        } else {
            parts.append("  --.-%")
            parts.append(size(done))
        }
        parts.append("\(size(Int64(rate)))/s" + (uploading ? " up" : ""))
        if total > 0, rate > 0, done < total {
            parts.append("\(clock(Double(total - done) / rate)) left")
        } else {
            parts.append("\(clock(seconds)) spent")
        }
        parts.append(transfers == 1 ? "1 transfer" : "\(transfers) transfers")
        return parts.joined(separator: "   ") + "  "
    }

    /// `512 B`, `12.0 KiB`, `3.4 MiB`, `1.2 GiB`.
    static func size(_ bytes: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(max(bytes, 0))
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(Int64(value)) B" : String(format: "%.1f", value) + " " + units[unit]
    }

    /// `h:mm:ss`.
    static func clock(_ seconds: Double) -> String {
        let whole = Int(min(max(seconds, 0), 359_999).rounded())
        return String(format: "%d:%02d:%02d", whole / 3600, whole / 60 % 60, whole % 60)
    }
}
