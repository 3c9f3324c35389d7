import Foundation

/// Delivers one task's events to its delegate or completion handler, in order, on the session's
/// delegate queue.
///
/// Handlers report from any thread; each report becomes a step here. A step either finishes when it
/// returns (`enqueue`) or holds the pipeline until the delegate answers a completion handler
/// (`enqueueAwaiting`): a response disposition, a redirect, a challenge. One operation on the
/// delegate queue drains as many steps as are ready, so a burst of chunks costs one queue hop.
///
/// The pipeline also counts body bytes waiting for delivery, which the task uses for back-pressure,
/// and it can be paused (a suspended task) and closed (after the final step nothing more runs).
final class TaskEventPipeline: @unchecked Sendable {
    /// A step that calls `resume` once the delegate has answered.
    typealias AwaitingStep = @Sendable (_ resume: @escaping @Sendable () -> Void) -> Void

    private enum Step {
        case immediate(@Sendable () -> Void, bytes: Int)
        case awaiting(AwaitingStep)
    }

    private let queue: OperationQueue
    private let lock = Lock()
    private var steps: [Step] = []
    private var head = 0
    private var drainScheduled = false
    private var awaitingGeneration: Int? = nil
    private var generation = 0
    private var paused = false
    private var closed = false
    /// The completion step: runs after every other step, once.
    private var finalStep: (@Sendable () -> Void)?
    private var finalStarted = false
    private var pendingBytes = 0
    private let onBytesDrained: @Sendable (_ pendingBytes: Int) -> Void

    /// A pipeline delivering on `queue`; `onBytesDrained` is told the bytes still pending each time a
    /// drain pass delivered some, from the delegate queue.
    init(queue: OperationQueue, onBytesDrained: @escaping @Sendable (_ pendingBytes: Int) -> Void) {
        self.queue = queue
        self.onBytesDrained = onBytesDrained
    }

    /// Body bytes enqueued but not yet delivered.
    var bytesPending: Int { lock.withLock { pendingBytes } }

    /// Adds a step that is done when it returns; `bytes` counts body bytes it delivers.
    func enqueue(bytes: Int = 0, _ step: @escaping @Sendable () -> Void) {
        append(.immediate(step, bytes: bytes))
    }

    /// Puts `steps` (each with the body bytes it delivers) ahead of everything still queued — for
    /// the body held while an awaiting step (the response disposition) was pending, which must come
    /// right after it. Ignored once the completion has started.
    func insertNext(_ steps: [(bytes: Int, run: @Sendable () -> Void)]) {
        guard !steps.isEmpty else { return }
        let schedule: Bool = lock.withLock {
            if finalStarted { return false }
            self.steps.insert(contentsOf: steps.map { Step.immediate($0.run, bytes: $0.bytes) }, at: head)
            pendingBytes += steps.reduce(0) { $0 + $1.bytes }
            return scheduleIfNeededLocked()
        }
        if schedule { scheduleDrain() }
    }

    /// Adds a step that holds the pipeline until it calls its `resume` argument.
    func enqueueAwaiting(_ step: @escaping AwaitingStep) {
        append(.awaiting(step))
    }

    /// Drops every step not yet run (and a completion not yet started), releases a step waiting for
    /// the delegate, and makes `final` the completion; it runs even if the pipeline is paused.
    /// Returns `false` when the completion has already started: then nothing changes.
    @discardableResult
    func replaceRemaining(withFinal final: @escaping @Sendable () -> Void) -> Bool {
        let (replaced, schedule): (Bool, Bool) = lock.withLock {
            if finalStarted { return (false, false) }
            steps.removeAll(keepingCapacity: false)
            head = 0
            pendingBytes = 0
            awaitingGeneration = nil
            generation &+= 1
            paused = false
            finalStep = final
            closed = true
            return (true, scheduleIfNeededLocked())
        }
        if schedule { scheduleDrain() }
        return replaced
    }

    /// Makes `final` the completion, after the steps already queued; nothing enqueued later runs.
    func close(withFinal final: @escaping @Sendable () -> Void) {
        let schedule: Bool = lock.withLock {
            if closed { return false }
            finalStep = final
            closed = true
            return scheduleIfNeededLocked()
        }
        if schedule { scheduleDrain() }
    }

    /// Holds (`true`) or releases (`false`) delivery, for a suspended task.
    func setPaused(_ value: Bool) {
        let schedule: Bool = lock.withLock {
            paused = value
            return scheduleIfNeededLocked()
        }
        if schedule { scheduleDrain() }
    }

    private func append(_ step: Step) {
        let schedule: Bool = lock.withLock {
            if closed { return false }
            if case .immediate(_, let bytes) = step { pendingBytes += bytes }
            steps.append(step)
            return scheduleIfNeededLocked()
        }
        if schedule { scheduleDrain() }
    }

    /// Whether a drain must be scheduled now; marks it scheduled. Call with the lock held.
    private func scheduleIfNeededLocked() -> Bool {
        guard !drainScheduled, awaitingGeneration == nil, head < steps.count || hasRunnableFinalLocked else { return false }
        if paused { return false }
        drainScheduled = true
        return true
    }

    /// The completion can run: every other step ran and it has not started.
    private var hasRunnableFinalLocked: Bool {
        head >= steps.count && finalStep != nil && !finalStarted
    }

    private func scheduleDrain() {
        queue.addOperation { [self] in drain() }
    }

    private func drain() {
        var delivered = 0
        while true {
            let next: (Step, Int)? = lock.withLock {
                if awaitingGeneration == nil, !paused, hasRunnableFinalLocked, let final = finalStep {
                    finalStarted = true
                    finalStep = nil
                    steps.removeAll(keepingCapacity: false)
                    head = 0
                    return (.immediate(final, bytes: 0), generation)
                }
                guard awaitingGeneration == nil, head < steps.count, !paused else {
                    drainScheduled = false
                    if head >= steps.count { steps.removeAll(keepingCapacity: true); head = 0 }
                    return nil
                }
                let step = steps[head]
                head += 1
                if head > 64 && head * 2 > steps.count {
                    steps.removeFirst(head)
                    head = 0
                }
                switch step {
                case .immediate(_, let bytes):
                    pendingBytes -= bytes
                case .awaiting:
                    awaitingGeneration = generation
                }
                return (step, generation)
            }
            guard let (step, stepGeneration) = next else { break }
            switch step {
            case .immediate(let run, let bytes):
                run()
                delivered += bytes
            case .awaiting(let run):
                let once = OnceFlag()
                run { [self] in
                    guard once.claim() else { return }
                    resumeAfterAwait(generation: stepGeneration)
                }
            }
        }
        if delivered > 0 { onBytesDrained(bytesPending) }
    }

    private func resumeAfterAwait(generation stepGeneration: Int) {
        let schedule: Bool = lock.withLock {
            guard awaitingGeneration == stepGeneration else { return false }
            awaitingGeneration = nil
            return scheduleIfNeededLocked()
        }
        if schedule { scheduleDrain() }
    }
}
