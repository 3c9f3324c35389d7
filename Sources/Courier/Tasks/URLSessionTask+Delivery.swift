import Foundation

// Delivering a task's events in order on the session's delegate queue. Steps are added to the
// task's event queue (`core.events`) under the task's lock, in the same critical section as the
// state change that produced them; one operation on the delegate queue then runs every ready step
// (`drainEvents`), so a burst of chunks costs one queue hop. Whether delivery is paused is the state
// machine's fact (`isDeliveryPaused`), read under the same lock.
extension URLSessionTask {
    /// The task's state machine, specialised to its loads and its successor.
    typealias Machine = TaskStateMachine<ActiveLoad, URLSessionDownloadTask>

    /// Adds a step that is done when it returns (`bytes`: the body bytes it delivers). Ignored
    /// once the completion is queued.
    func enqueue(bytes: Int = 0, _ step: @escaping @Sendable () -> Void) {
        let schedule: Bool = lock.withLock { enqueueLocked(.immediate(step, bytes: bytes)) }
        if schedule { scheduleDrain() }
    }

    /// Adds a step that holds delivery until it calls its `resume` argument (the delegate answered).
    /// Ignored once the completion is queued.
    func enqueueAwaiting(_ step: @escaping TaskEventQueue.AwaitingStep) {
        let schedule: Bool = lock.withLock { enqueueLocked(.awaiting(step)) }
        if schedule { scheduleDrain() }
    }

    /// Adds `step` unless the completion is queued. Call with the lock held; schedule a drain
    /// (``scheduleDrain()``) after unlocking when this returns `true`.
    func enqueueLocked(_ step: TaskEventQueue.Step) -> Bool {
        guard core.machine.acceptsSteps else { return false }
        return core.events.append(step, paused: core.machine.isDeliveryPaused)
    }

    /// A read-only view of what the task still has to deliver (diagnostics, tests); `nil` for a
    /// task that belongs to no session.
    var pipeline: DeliveryView? { context == nil ? nil : DeliveryView(task: self) }

    /// What ``pipeline`` shows.
    struct DeliveryView {
        let task: URLSessionTask

        /// Body bytes queued for the delegate and not yet delivered.
        var bytesPending: Int { task.lock.withLock { task.core.events.pendingBytes } }
    }

    /// Runs the ready steps on the delegate queue, in one operation (shared with other tasks' drains
    /// on a serial queue, see ``TaskDrainScheduler``). Call with no lock held.
    ///
    /// One exception: the completion of an async call's task (``completesInPlace``) runs
    /// here, on the thread that ended the task, when it is the only step left and no delegate may
    /// receive the task's metrics. Nothing the app can observe runs on the delegate queue then (the
    /// continuation resumes the caller on its own executor), and the operation the queue would run
    /// costs two or three thread wake-ups per request. With a delegate, every step keeps its place
    /// on the delegate queue, in Apple's order.
    func scheduleDrain() {
        guard let context else { return }
        if completesInPlaceNow(context) {
            drainEvents()
            return
        }
        context.drains.schedule(self, on: context.delegateQueue)
    }

    /// Lets the completion run in place when it is all that is left (``completesInPlace``): for a
    /// task whose completion handler only resumes an async call. Call before `resume()`.
    func allowCompletionInPlace() {
        completesInPlace.store(true, ordering: .releasing)
    }

    /// Whether the drain just asked for may run on this thread (see ``scheduleDrain()``).
    private func completesInPlaceNow(_ context: TaskSessionContext) -> Bool {
        guard completesInPlace.load(ordering: .acquiring) else { return false }
        let candidate = lock.withLock { core.delegate == nil && core.events.holdsOnlyFinal }
        return candidate && !(context.owner.delegate is URLSessionTaskDelegate)
    }

    /// The drain: runs steps until none is ready. Each step is taken under the lock and run outside
    /// it. Taking a body chunk may bring the waiting bytes below the low-water mark: the handler
    /// paused by back-pressure is woken then, before the chunk is delivered. Runs on the delegate
    /// queue (``TaskDrainScheduler``), or in place for an async call's lone completion
    /// (``scheduleDrain()``).
    func drainEvents() {
        enum Next {
            case none
            case run(@Sendable () -> Void, wake: ActiveLoad?)
            case await(TaskEventQueue.AwaitingStep, ticket: Int)
        }
        while true {
            let next: Next = lock.withLock {
                switch core.events.next(paused: core.machine.isDeliveryPaused) {
                case .none:
                    return .none
                case .immediate(let run, let bytes):
                    let wake = bytes > 0 ? core.machine.drained(pendingBytes: core.waitingBodyBytes) : nil
                    return .run(run, wake: wake)
                case .awaiting(let step, let ticket):
                    return .await(step, ticket: ticket)
                case .final(let run):
                    _ = core.machine.completionStarted()
                    return .run(run, wake: nil)
                }
            }
            switch next {
            case .none:
                return
            case .run(let run, let wake):
                wake?.resumeProducing()
                run()
            case .await(let step, let ticket):
                let once = OnceFlag()
                step { [self] in
                    guard once.claim() else { return }
                    let schedule: Bool = lock.withLock {
                        core.events.resumed(ticket: ticket, paused: core.machine.isDeliveryPaused)
                    }
                    if schedule { scheduleDrain() }
                }
            }
        }
    }
}
