import Foundation

/// Runs a WebSocket task's completion handlers (sends, receives, pings) on the session's delegate
/// queue, one at a time and in the order they were posted, also on a concurrent queue an app
/// supplied: one operation runs every callback posted until none is left.
///
/// They do not go through the task's event queue, whose steps a cancel replaces with the
/// completion: a receive's handler must run even when the task is cancelled (with the error), or an
/// `await task.receive()` would never return.
final class WebSocketCallbackQueue: Sendable {
    private struct Pending: Sendable {
        var callbacks: [@Sendable () -> Void] = []
        var scheduled = false
    }

    private let queue: OperationQueue
    private let pending = Locked(Pending())

    /// Callbacks run on `queue`.
    init(queue: OperationQueue) {
        self.queue = queue
    }

    /// Runs `callback` after those posted before it.
    func post(_ callback: @escaping @Sendable () -> Void) {
        let schedule: Bool = pending.withLock { state in
            state.callbacks.append(callback)
            defer { state.scheduled = true }
            return !state.scheduled
        }
        if schedule { queue.addOperation { [self] in drain() } }
    }

    private func drain() {
        while true {
            let batch: [@Sendable () -> Void] = pending.withLock { state in
                if state.callbacks.isEmpty {
                    state.scheduled = false
                    return []
                }
                defer { state.callbacks.removeAll(keepingCapacity: true) }
                return state.callbacks
            }
            if batch.isEmpty { return }
            for callback in batch { callback() }
        }
    }
}
