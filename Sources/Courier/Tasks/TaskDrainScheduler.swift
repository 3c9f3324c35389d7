import Foundation

/// Puts the drains of a session's tasks (`URLSessionTask.drainEvents`) on its delegate queue, so
/// that every delegate call and completion handler runs in an operation of that queue.
///
/// On a serial delegate queue (`maxConcurrentOperationCount == 1`, the queue a session makes when
/// it is given none) the drains of several tasks share one operation: a task that has steps ready
/// joins the list of the operation already queued and not yet started, and only a task that finds
/// none queues one. An `Operation` of FoundationNetworking's `OperationQueue` costs about 20,000
/// instructions (three locks, a condition, a dispatch work item), more than the rest of a `data:`
/// task; with many tasks in flight the operations now come in batches. Nothing changes for the
/// app: the drains run one at a time, as before, inside an operation of the delegate queue (so
/// `OperationQueue.current` is that queue), each task's steps in order, and a task that became
/// ready before the app added an operation to the queue is drained before that operation (its
/// batch was queued first). When the app suspends the queue from a delegate call, the batch stops
/// after that task and the rest wait in a new operation. On a queue that may run operations
/// concurrently, each drain is an operation of its own, as there is no order to keep.
final class TaskDrainScheduler: Sendable {
    /// The session's own delegate queue: the only queue whose drains are batched (a subclass that
    /// answers another queue from `delegateQueue` gets an operation per drain).
    private let queue: OperationQueue
    private let state = Locked(State())

    private struct State {
        /// Tasks waiting for the queued batch, in the order they became ready.
        var ready: [URLSessionTask] = []
        /// A batch operation is queued and has not yet taken ``ready``.
        var queued = false
    }

    init(queue: OperationQueue) {
        self.queue = queue
    }

    /// Runs `task`'s drain on `delegateQueue` (the session's `delegateQueue` now). Call with no
    /// lock held, once per drain the task's event queue asked for.
    func schedule(_ task: URLSessionTask, on delegateQueue: OperationQueue) {
        guard delegateQueue === queue, queue.maxConcurrentOperationCount == 1 else {
            delegateQueue.addOperation { task.drainEvents() }
            return
        }
        let addOperation: Bool = state.withLock { state in
            state.ready.append(task)
            if state.queued { return false }
            state.queued = true
            return true
        }
        if addOperation { queue.addOperation { [self] in runBatch() } }
    }

    /// The batch operation: drains every task that was ready when it started.
    private func runBatch() {
        let tasks: [URLSessionTask] = state.withLock { state in
            state.queued = false
            let taken = state.ready
            state.ready = []
            return taken
        }
        var index = 0
        while index < tasks.count {
            tasks[index].drainEvents()
            index += 1
            if index < tasks.count && queue.isSuspended {
                // The app suspended its queue from a delegate call: the others wait for it, ahead
                // of tasks that become ready later.
                requeue(tasks[index...])
                return
            }
        }
    }

    /// Puts `tasks` back at the front of the list, in a batch that runs when the queue resumes.
    private func requeue(_ tasks: ArraySlice<URLSessionTask>) {
        let addOperation: Bool = state.withLock { state in
            state.ready.insert(contentsOf: tasks, at: 0)
            if state.queued { return false }
            state.queued = true
            return true
        }
        if addOperation { queue.addOperation { [self] in runBatch() } }
    }
}
