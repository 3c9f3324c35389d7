import Foundation

/// The serial operation queue a session makes when it is given none (Apple: "the session creates
/// a serial operation queue for performing all delegate method calls and completion handler
/// calls"). It is an ordinary `OperationQueue` with one difference the app cannot see: it tells
/// the session's ``TaskDrainScheduler`` before an operation is added or someone waits for the
/// queue to empty, so that a batch operation lingering for more drains gives way at once instead
/// of holding the app's operation (or its `waitUntilAllOperationsAreFinished()`) back, and tasks
/// that became ready before the app's operation are drained before it.
final class SessionDelegateQueue: OperationQueue, @unchecked Sendable {
    /// Called before every operation is added, and before waiting for the queue to empty.
    private let observer = Locked<(@Sendable () -> Void)?>(nil)

    /// A serial queue named `name`.
    init(name: String) {
        super.init()
        maxConcurrentOperationCount = 1
        self.name = name
    }

    /// Sets what is called when an operation is added or the queue is waited for.
    func observeActivity(_ body: @escaping @Sendable () -> Void) {
        observer.withLock { $0 = body }
    }

    private func notify() {
        observer.withLock { $0 }?()
    }

    // `addOperation(_ block:)` adds through `addOperation(_ op:)`, so it is seen here too.
    override func addOperation(_ op: Operation) {
        notify()
        super.addOperation(op)
    }

    override func addOperations(_ ops: [Operation], waitUntilFinished wait: Bool) {
        notify()
        super.addOperations(ops, waitUntilFinished: wait)
    }

    override func addBarrierBlock(_ barrier: @escaping @Sendable () -> Void) {
        notify()
        super.addBarrierBlock(barrier)
    }

    override func waitUntilAllOperationsAreFinished() {
        notify()
        super.waitUntilAllOperationsAreFinished()
    }
}
