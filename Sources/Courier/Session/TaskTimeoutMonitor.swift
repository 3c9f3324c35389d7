import Foundation

/// Watches a session's loading tasks for timeouts with one timer per session, running only while
/// some task is loading — not a timer per task.
final class TaskTimeoutMonitor: @unchecked Sendable {
    /// How often loading tasks are checked.
    static let interval: DispatchTimeInterval = .milliseconds(100)

    weak var session: URLSession?
    private let lock = Lock()
    private var timer: DispatchSourceTimer?
    private let queue = DispatchQueue(label: "courier.timeouts")
    /// Counts `start()` calls, so a tick that saw no loading task does not stop a timer a task
    /// started meanwhile relies on.
    private var starts = 0

    /// Starts the timer if it is not running.
    func start() {
        lock.withLock {
            starts &+= 1
            guard timer == nil else { return }
            let source = DispatchSource.makeTimerSource(queue: queue)
            source.schedule(deadline: .now() + Self.interval, repeating: Self.interval, leeway: .milliseconds(20))
            source.setEventHandler { [weak self] in self?.tick() }
            timer = source
            source.resume()
        }
    }

    private func tick() {
        let before = lock.withLock { starts }
        guard let session else { stop(ifStartsAre: before); return }
        let now = monotonicNanoseconds()
        var anyLoading = false
        for task in session.liveTasks where task.isLoading {
            anyLoading = true
            task.checkTimeouts(now: now)
        }
        if !anyLoading { stop(ifStartsAre: before) }
    }

    private func stop(ifStartsAre count: Int) {
        lock.withLock {
            guard starts == count else { return }
            timer?.cancel()
            timer = nil
        }
    }

    deinit { timer?.cancel() }
}
