import Foundation

/// A value guarded by a lock, reached only through `withLock`: the shape of
/// `Synchronization.Mutex`, built on `NSLock` (a `pthread_mutex_t` on Linux).
///
/// The kit's counterpart of Courier's `Locked`: a plugin links the kit, never Courier, so the kit
/// keeps its own. Neither uses `Mutex`, because ThreadSanitizer cannot see `Mutex` on Linux; see
/// "Locks" in `Documentation/Conventions.md`.
final class KitLocked<Value>: @unchecked Sendable {
    // `@unchecked Sendable`: `value` is reached only inside `withLock`, under `lock`, and it enters
    // and leaves only as `sending` values, exactly as with `Mutex`.
    private let lock = NSLock()
    private var value: Value

    /// Creates the lock holding `initialValue`.
    init(_ initialValue: sending Value) {
        value = initialValue
    }

    /// Runs `body` with exclusive access to the value, and returns what it returns.
    func withLock<Result, E: Error>(_ body: (inout sending Value) throws(E) -> sending Result) throws(E) -> sending Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
