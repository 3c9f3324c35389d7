import Foundation

/// A value guarded by a lock: the state lives inside the lock and is reached only through
/// `withLock`. It has the shape of `Synchronization.Mutex` (the same `sending` rules, so a state
/// that is not `Sendable` can only be moved in and out whole), but it is a class built on `Lock`.
///
/// Courier uses it instead of `Mutex` because ThreadSanitizer cannot see `Mutex` on Linux: `Mutex`
/// waits with raw futex system calls that TSan does not intercept, so every access under it looks
/// like a race. `Lock` is a `pthread_mutex_t`, which TSan models. See "Locks" in
/// `Documentation/Conventions.md`.
package final class Locked<State>: @unchecked Sendable {
    // `@unchecked Sendable`: `state` is reached only inside `withLock`, under `lock`, and it enters
    // and leaves only as `sending` values, exactly as with `Mutex`.
    private let lock = Lock()
    private var state: State

    /// Creates the lock holding `initialState`.
    package init(_ initialState: sending State) {
        state = initialState
    }

    /// Runs `body` with exclusive access to the state, and returns what it returns.
    ///
    /// - Parameter body: Reads or changes the state. It must not take this lock again (the lock
    ///   is not recursive) and should call out to nothing that can block.
    @inline(__always)
    package func withLock<Result, E: Error>(
        _ body: (inout sending State) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
