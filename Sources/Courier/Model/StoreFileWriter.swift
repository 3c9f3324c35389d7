import Foundation

/// Writes a persistent store's file on a background queue, coalescing bursts of changes.
///
/// A store calls `setNeedsWrite(_:)` after each change with a closure that encodes its current
/// contents. The first call after a write schedules one write `delay` seconds later; calls made
/// before it runs only replace the closure, so a burst of changes costs one write, made from the
/// state the store has when the write runs. `flush()` performs a pending write at once, on the
/// caller's thread, and returns when it is on disk.
///
/// The pending closure keeps the store alive until the write is done, so a store that goes away
/// right after a change still saves it. Write failures are ignored: the store stays correct in
/// memory and the next change tries again.
final class StoreFileWriter: Sendable {

    /// The file written.
    let file: StoreFile

    /// How long a change waits for more changes before the file is written.
    let delay: TimeInterval

    /// Encodes the store's contents, or returns `nil` to skip the write.
    typealias Snapshot = @Sendable () -> Data?

    private let queue = DispatchQueue(label: "Courier.StoreFileWriter", qos: .utility)
    private let pending = Locked<Snapshot?>(nil)

    /// Creates a writer for `file`.
    ///
    /// - Parameters:
    ///   - file: The file to write.
    ///   - delay: The coalescing delay, in seconds.
    init(file: StoreFile, delay: TimeInterval) {
        self.file = file
        self.delay = max(0, delay)
    }

    /// Schedules a write of what `snapshot` returns when the write runs.
    ///
    /// - Parameter snapshot: Encodes the store's contents; called on the writer's queue (or by
    ///   `flush()`), never while the caller's locks are held.
    func setNeedsWrite(_ snapshot: @escaping Snapshot) {
        let scheduled = pending.withLock { pending -> Bool in
            let alreadyScheduled = pending != nil
            pending = snapshot
            return alreadyScheduled
        }
        guard !scheduled else { return }
        queue.asyncAfter(deadline: .now() + delay) { [self] in writePending() }
    }

    /// Schedules a write and performs it before returning.
    ///
    /// - Parameter snapshot: Encodes the store's contents.
    func writeNow(_ snapshot: @escaping Snapshot) {
        pending.withLock { $0 = snapshot }
        flush()
    }

    /// Performs the pending write, if any, before returning. Must not be called while holding a
    /// lock the snapshot closure takes.
    func flush() {
        queue.sync { writePending() }
    }

    /// Whether a write is waiting to run.
    var hasPendingWrite: Bool {
        pending.withLock { $0 != nil }
    }

    /// Takes the pending snapshot and writes it; runs on `queue`.
    private func writePending() {
        let snapshot = pending.withLock { pending -> Snapshot? in
            defer { pending = nil }
            return pending
        }
        guard let snapshot, let data = snapshot() else { return }
        file.write(data)
    }
}
