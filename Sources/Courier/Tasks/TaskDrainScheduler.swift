import Dispatch
import Foundation
import Synchronization

/// Puts the drains of a session's tasks (`URLSessionTask.drainEvents`) on its delegate queue, so
/// that every delegate call and completion handler runs in an operation of that queue.
///
/// On a serial delegate queue (`maxConcurrentOperationCount == 1`) the drains of several tasks
/// share one operation: a task that has steps ready joins the list of the operation already
/// queued and not yet started, and only a task that finds none queues one. An `Operation` of
/// FoundationNetworking's `OperationQueue` costs about 20,000 instructions (three locks, a
/// condition, a dispatch work item) and two or three thread switches (the worker that
/// `addOperation` wakes blocks at once on the queue's lock, which the adding thread still holds):
/// more than the rest of a `data:` task, or of a 1 KiB GET on loopback.
///
/// On the queue the session made itself (``SessionDelegateQueue``) the batch operation also takes
/// the tasks that become ready while it drains, and then **lingers**: when nothing else waits on
/// the queue, it waits up to ``lingerTime`` for the next task to become ready and drains that one
/// too, in the same operation. An app that runs one request after another (the next `resume()`
/// from the last completion handler, or from a thread waiting on it) then pays one thread wake per
/// completion instead of a new operation. The lingering operation gives way at once when the app
/// adds an operation of its own or waits for the queue to empty (the queue tells the scheduler
/// before it does either), when the queue is suspended, or when the time is up. A queue the app
/// passed in gets no lingering: its operations cannot be seen as they are added. Only one batch
/// operation in the process lingers at a time (``lingerPermit``): a lingering operation blocks a
/// worker thread of libdispatch's pool, which on Linux has one thread per core and replaces a
/// blocked one only when its monitor next looks, so several lingering sessions could starve
/// other work queued on the pool.
///
/// Nothing changes for the app: the drains run one at a time inside an operation of the delegate
/// queue (so `OperationQueue.current` is that queue), each task's steps in order, and a task that
/// became ready before the app added an operation to the queue is drained before that operation
/// (its batch was queued first, or it is drained by the operation already running). When the app
/// suspends the queue from a delegate call, the batch stops after that task and the rest wait in
/// a new operation. On a queue that may run operations concurrently, each drain is an operation of
/// its own, as there is no order to keep.
final class TaskDrainScheduler: Sendable {
    /// How long a batch operation that ran out of work waits for more before it ends, unless
    /// ``setLingerTime(_:)`` changed it.
    static let lingerTime: DispatchTimeInterval = .milliseconds(2)

    /// Held by the one batch operation in the process that lingers now.
    private static let lingerPermit = Atomic<Bool>(false)

    /// The session's delegate queue: the only queue whose drains are batched (a subclass that
    /// answers another queue from `delegateQueue` gets an operation per drain).
    private let queue: OperationQueue
    /// Whether batch operations take late tasks and linger: only on a ``SessionDelegateQueue``.
    private let lingers: Bool
    private let state = Locked(State())
    /// Signalled once each time ``State/Active/lingering`` becomes ``State/Active/woken``.
    private let wakeUp = DispatchSemaphore(value: 0)

    private struct State {
        /// Tasks waiting to be drained, in the order they became ready: by the queued batch, or
        /// by the running one (on a ``SessionDelegateQueue``).
        var ready: [URLSessionTask] = []
        /// A batch operation is queued and has not yet taken ``ready``.
        var queued = false
        /// What the running batch operation does (on a ``SessionDelegateQueue``).
        var active = Active.idle
        /// How long the batch operation lingers.
        var lingerTime = TaskDrainScheduler.lingerTime

        enum Active {
            /// No batch operation runs.
            case idle
            /// A batch operation drains; tasks that become ready join ``State/ready`` for it.
            case draining
            /// The batch operation waits on ``TaskDrainScheduler/wakeUp`` for work.
            case lingering
            /// A task became ready for the lingering operation, or the app is about to add an
            /// operation, and the semaphore was (or is about to be) signalled.
            case woken
        }
    }

    /// What ``lingerForMore()`` found after its wait.
    private enum LingerOutcome {
        /// Nothing woke it: the operation ends.
        case timedOut
        /// The operation ends; `queueBatch` when the ready tasks need a batch of their own.
        case end(queueBatch: Bool)
        /// The operation drains these next.
        case drain([URLSessionTask])
    }

    init(queue: OperationQueue) {
        self.queue = queue
        let sessionQueue = queue as? SessionDelegateQueue
        lingers = sessionQueue != nil
        sessionQueue?.observeActivity { [weak self] in self?.appWillUseQueue() }
    }

    /// Changes how long a batch operation lingers (tests lengthen it to see the lingering).
    func setLingerTime(_ time: DispatchTimeInterval) {
        state.withLock { $0.lingerTime = time }
    }

    /// Runs `task`'s drain on `delegateQueue` (the session's `delegateQueue` now). Call with no
    /// lock held, once per drain the task's event queue asked for.
    func schedule(_ task: URLSessionTask, on delegateQueue: OperationQueue) {
        guard delegateQueue === queue, queue.maxConcurrentOperationCount == 1 else {
            delegateQueue.addOperation { task.drainEvents() }
            return
        }
        enum Handoff { case joined, addBatch, wakeLingering }
        let handoff: Handoff = state.withLock { state in
            state.ready.append(task)
            switch state.active {
            case .lingering:
                state.active = .woken
                return .wakeLingering
            case .draining where lingers, .woken:
                return .joined
            case .idle, .draining:
                if state.queued { return .joined }
                state.queued = true
                return .addBatch
            }
        }
        switch handoff {
        case .joined: break
        case .addBatch: addBatch()
        case .wakeLingering: wakeUp.signal()
        }
    }

    /// The app is about to add an operation to the queue, or to wait for it to empty. A lingering
    /// batch operation ends now rather than hold it back; tasks already waiting for the running
    /// one get a batch of their own, queued ahead of the app's operation.
    private func appWillUseQueue() {
        enum Response { case none, wakeLingering, addBatch }
        let response: Response = state.withLock { state in
            switch state.active {
            case .idle:
                return .none
            case .lingering:
                state.active = .woken
                return .wakeLingering
            case .draining, .woken:
                guard !state.ready.isEmpty, !state.queued else { return .none }
                state.queued = true
                return .addBatch
            }
        }
        switch response {
        case .none: break
        case .wakeLingering: wakeUp.signal()
        case .addBatch: addBatch()
        }
    }

    private func addBatch() {
        queue.addOperation { [self] in runBatch() }
    }

    /// The batch operation: drains every task that was ready when it started, then (on a
    /// ``SessionDelegateQueue``) those that became ready meanwhile and those it lingers for.
    private func runBatch() {
        var (tasks, takesMore): ([URLSessionTask], Bool) = state.withLock { state in
            state.queued = false
            let taken = state.ready
            state.ready = []
            // Only one batch at a time takes late tasks (two could run at once only if the app
            // raised the queue's `maxConcurrentOperationCount` after they were queued).
            guard lingers, state.active == .idle else { return (taken, false) }
            state.active = .draining
            return (taken, true)
        }
        while true {
            guard drain(tasks) else {
                if takesMore { endTakingMore() }
                return
            }
            guard takesMore, let more = lingerForMore() else { return }
            tasks = more
        }
    }

    /// Drains `tasks` in order. Returns `false` when the app suspended the queue from a delegate
    /// call, after handing the rest to a new batch.
    private func drain(_ tasks: [URLSessionTask]) -> Bool {
        var index = 0
        while index < tasks.count {
            tasks[index].drainEvents()
            index += 1
            if index < tasks.count && queue.isSuspended {
                // The app suspended its queue from a delegate call: the others wait for it, ahead
                // of tasks that become ready later.
                requeue(tasks[index...])
                return false
            }
        }
        return true
    }

    /// The running batch operation stops taking tasks; those that joined it go to a batch.
    private func endTakingMore() {
        let queueBatch: Bool = state.withLock { state in
            state.active = .idle
            guard !state.ready.isEmpty, !state.queued else { return false }
            state.queued = true
            return true
        }
        if queueBatch { addBatch() }
    }

    /// Returns the tasks the running batch operation drains next: those that became ready while
    /// it drained, or else the first that becomes ready within ``lingerTime``. `nil` when the
    /// operation ends: the time is up, a batch is queued, the queue is suspended, or the app queued
    /// an operation of its own (which must not wait for this one). Called in state `.draining`.
    private func lingerForMore() -> [URLSessionTask]? {
        // The queue's own locks are never taken under the state's.
        let queueIsFree = !queue.isSuspended && queue.operationCount <= 1
        let hasPermit = queueIsFree && Self.lingerPermit.compareExchange(
            expected: false, desired: true, ordering: .acquiring).exchanged
        defer { if hasPermit { Self.lingerPermit.store(false, ordering: .releasing) } }
        enum Next { case end(queueBatch: Bool), drain([URLSessionTask]), wait(DispatchTimeInterval) }
        let next: Next = state.withLock { state in
            if state.queued {
                // A batch queued meanwhile takes what is ready.
                state.active = .idle
                return .end(queueBatch: false)
            }
            guard queueIsFree else {
                state.active = .idle
                guard !state.ready.isEmpty else { return .end(queueBatch: false) }
                state.queued = true
                return .end(queueBatch: true)
            }
            guard state.ready.isEmpty else {
                let taken = state.ready
                state.ready = []
                return .drain(taken)
            }
            guard hasPermit else {
                // Another session's operation lingers: this one ends.
                state.active = .idle
                return .end(queueBatch: false)
            }
            state.active = .lingering
            return .wait(state.lingerTime)
        }
        switch next {
        case .end(let queueBatch):
            if queueBatch { addBatch() }
            return nil
        case .drain(let tasks):
            return tasks
        case .wait(let lingerTime):
            return waitForMore(lingerTime)
        }
    }

    /// Lingers: waits up to `lingerTime` for ``State/Active/woken``. Called in state `.lingering`.
    private func waitForMore(_ lingerTime: DispatchTimeInterval) -> [URLSessionTask]? {
        let waited = wakeUp.wait(timeout: .now() + lingerTime)
        let stillFree = !queue.isSuspended && queue.operationCount <= 1
        let outcome: LingerOutcome = state.withLock { state in
            guard state.active == .woken else {
                state.active = .idle
                return .timedOut
            }
            return takeWoken(&state, queueIsFree: stillFree)
        }
        return finish(outcome, waited: waited)
    }

    /// What the woken operation does: ends, queues a batch, or takes the ready tasks. Call with the
    /// state locked, in state `.woken`.
    private func takeWoken(_ state: inout State, queueIsFree: Bool) -> LingerOutcome {
        if state.queued || state.ready.isEmpty {
            // Woken by the app (an operation about to be added, or a wait for the queue to
            // empty), or a batch was queued for what is ready: the operation ends.
            state.active = .idle
            return .end(queueBatch: false)
        }
        guard queueIsFree else {
            // Suspended, or the app's operation must not wait for this one: what became ready
            // goes to a batch of its own, behind the app's.
            state.active = .idle
            state.queued = true
            return .end(queueBatch: true)
        }
        state.active = .draining
        let taken = state.ready
        state.ready = []
        return .drain(taken)
    }

    /// Carries out `outcome`. When the operation was woken, the signal comes right after the waker
    /// let go of the lock; if the wait had timed out just before, that signal is taken now, so
    /// that it does not end a later wait early.
    private func finish(_ outcome: LingerOutcome, waited: DispatchTimeoutResult) -> [URLSessionTask]? {
        if case .timedOut = outcome {} else if waited == .timedOut { wakeUp.wait() }
        switch outcome {
        case .timedOut:
            return nil
        case .end(let queueBatch):
            if queueBatch { addBatch() }
            return nil
        case .drain(let tasks):
            return tasks
        }
    }

    /// Puts `tasks` back at the front of the list, in a batch that runs when the queue resumes.
    private func requeue(_ tasks: ArraySlice<URLSessionTask>) {
        let queueBatch: Bool = state.withLock { state in
            state.ready.insert(contentsOf: tasks, at: 0)
            if state.queued { return false }
            state.queued = true
            return true
        }
        if queueBatch { addBatch() }
    }
}
