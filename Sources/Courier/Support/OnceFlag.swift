import Foundation

/// A flag that can be claimed once, from any thread: guards completion handlers a delegate might
/// call twice.
final class OnceFlag: @unchecked Sendable {
    private let lock = Lock()
    private var claimed = false

    /// `true` the first time only.
    func claim() -> Bool {
        lock.withLock {
            if claimed { return false }
            claimed = true
            return true
        }
    }
}
