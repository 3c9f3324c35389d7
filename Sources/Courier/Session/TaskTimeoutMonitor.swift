import Foundation

/// Watches a session's loading tasks for timeouts with one timer per session, running only while
/// some task is loading — not a timer per task.
///
/// The timer ticks every ``interval`` while some loading task has an idle timeout
/// (`timeoutIntervalForRequest`), is suspended, or has its idle clock held (those need every tick).
/// When the only loading tasks are ones with nothing but a resource deadline — an open WebSocket,
/// which has no idle timeout — it sleeps until the earliest deadline instead of ticking
/// (``TaskTimeoutCheck``). With no loading task it stops. ``start()`` (a task starts a load)
/// makes it tick again.
final class TaskTimeoutMonitor: @unchecked Sendable {
    /// How often loading tasks are checked.
    static let interval: DispatchTimeInterval = .milliseconds(100)

    /// What the timer does.
    enum Mode: Equatable {
        /// No timer.
        case stopped
        /// Every ``interval``.
        case ticking
        /// Once, at this monotonic time (nanoseconds).
        case sleeping(until: UInt64)
    }

    weak var session: URLSession?
    /// Guards `timer`, `mode` and `starts`; a leaf (libdispatch only inside it).
    private let lock = Lock()
    private var timer: DispatchSourceTimer?
    private var mode = Mode.stopped
    private let queue = DispatchQueue(label: "courier.timeouts")
    /// Counts `start()` calls, so a tick that saw no loading task does not stop (or put to sleep) a
    /// timer a task started meanwhile relies on.
    private var starts = 0

    /// What the timer does now (tests).
    var currentMode: Mode { lock.withLock { mode } }

    /// Makes the timer tick, starting it if it is not running.
    func start() {
        lock.withLock {
            starts &+= 1
            guard mode != .ticking else { return }
            mode = .ticking
            if let timer {
                timer.schedule(deadline: .now() + Self.interval, repeating: Self.interval, leeway: .milliseconds(20))
                return
            }
            let source = DispatchSource.makeTimerSource(queue: queue)
            source.schedule(deadline: .now() + Self.interval, repeating: Self.interval, leeway: .milliseconds(20))
            source.setEventHandler { [weak self] in self?.tick() }
            timer = source
            source.resume()
        }
    }

    private func tick() {
        let before = lock.withLock { starts }
        guard let session else { apply(.stopped, ifStartsAre: before); return }
        let now = monotonicNanoseconds()
        var next = Mode.stopped
        for task in session.liveTasks {
            switch task.checkTimeouts(now: now) {
            case .none:
                break
            case .everyTick:
                next = .ticking
            case .at(let deadline):
                switch next {
                case .stopped: next = .sleeping(until: deadline)
                case .sleeping(let earlier): next = .sleeping(until: min(earlier, deadline))
                case .ticking: break
                }
            }
        }
        apply(next, ifStartsAre: before)
    }

    /// Switches to `next` unless a task started loading since the tick began (it stays ticking).
    private func apply(_ next: Mode, ifStartsAre count: Int) {
        lock.withLock {
            guard starts == count, next != mode else { return }
            switch next {
            case .stopped:
                timer?.cancel()
                timer = nil
            case .ticking:
                timer?.schedule(deadline: .now() + Self.interval, repeating: Self.interval, leeway: .milliseconds(20))
            case .sleeping(let deadline):
                let now = monotonicNanoseconds()
                // Just past the deadline, so the check that wakes finds it passed.
                let delay = deadline > now ? deadline - now : 0
                let wait = DispatchTimeInterval.nanoseconds(Int(min(delay, UInt64(Int.max / 2))) + 1_000_000)
                timer?.schedule(deadline: .now() + wait, repeating: .never, leeway: .milliseconds(50))
            }
            mode = timer == nil ? .stopped : next
        }
    }

    deinit { timer?.cancel() }
}
