import Foundation

/// Runs `body` with a continuation and waits for it to be resumed, like
/// `withCheckedThrowingContinuation`, but hands the result over through a lock that
/// ThreadSanitizer can see.
///
/// Swift's concurrency runtime tells TSan about a continuation's hand-off only when the waiting task
/// had already suspended. When `resume` comes first (a `file:` load can finish before its caller
/// suspends), the waiting task goes on with no happens-before edge that TSan can see, and every
/// read of what the resuming thread wrote is reported as a race. The resuming side releases
/// `handoff` before it resumes, and the waiting side takes it after, which makes the edge visible.
/// See "Checking" in `Documentation/Concurrency.md`.
func withHandoffContinuation<T: Sendable>(
    _ body: (HandoffContinuation<T>) -> Void
) async throws -> T {
    let handoff = Lock()
    let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, any Error>, Never>) in
        body(HandoffContinuation(continuation: continuation, handoff: handoff))
    }
    handoff.withLock {}
    return try result.get()
}

/// The continuation `withHandoffContinuation` passes to its body: resume it exactly once.
struct HandoffContinuation<T: Sendable>: Sendable {
    fileprivate let continuation: CheckedContinuation<Result<T, any Error>, Never>
    fileprivate let handoff: Lock

    /// Resumes the waiting task with `value`.
    func resume(returning value: T) {
        resume(with: .success(value))
    }

    /// Resumes the waiting task by throwing `error`.
    func resume(throwing error: any Error) {
        resume(with: .failure(error))
    }

    /// Resumes the waiting task with `result`.
    func resume(with result: Result<T, any Error>) {
        handoff.withLock {}
        continuation.resume(returning: result)
    }
}
