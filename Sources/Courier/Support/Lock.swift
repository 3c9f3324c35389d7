import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A small mutual-exclusion lock for state held in `@unchecked Sendable` classes.
///
/// Unlike `Locked`, the protected state lives in the owning class, so reading a non-`Sendable`
/// reference (a protocol instance, a stream) out of it needs no transfer dance. State that is
/// `Sendable` belongs in a `Locked` instead, which is built on this lock.
final class Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` while holding the lock.
    @inline(__always)
    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Takes the lock, waiting for it. Every `lock()` is paired with an `unlock()` on the same
    /// thread; prefer `withLock`, which cannot forget it (`Locked` needs the pair to hand `sending`
    /// values through).
    @inline(__always)
    func lock() {
        pthread_mutex_lock(mutex)
    }

    /// Releases the lock taken by `lock()` on this thread.
    @inline(__always)
    func unlock() {
        pthread_mutex_unlock(mutex)
    }

    /// Runs `body` while holding the lock if it is free now; `nil` (without running `body`) when
    /// another thread holds it, or this one does.
    @inline(__always)
    func withLockIfAvailable<T>(_ body: () throws -> T) rethrows -> T? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// Carries a value that is not `Sendable` across a concurrency boundary where the code guarantees
/// it is used by one thread at a time (for example, a `URLProtocol` driven on its own serial queue).
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
