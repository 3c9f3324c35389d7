import Foundation

/// Back-pressure for a libcurl download, shared by the http and ftp handlers: the write callback
/// asks ``shouldPause(for:)`` before delivering each piece of the body, and the handler's
/// `resumeProducing()` asks ``wake()`` whether the transfer must be unpaused.
///
/// The consumer's wake-up can land between its answer "no more" (`canAcceptMoreData`) and the
/// moment the handler pauses libcurl. It is remembered, and the write callback asks the consumer
/// again instead of pausing, so a transfer is never left paused with nobody to wake it.
final class CurlFlowControl: @unchecked Sendable {
    private let lock = Lock()
    /// The write callback paused libcurl and no wake-up has come since.
    private var paused = false
    /// A wake-up came while the transfer was not paused (it may have been about to).
    private var wakeRequested = false

    /// Forgets any pause and wake-up (a new transfer starts).
    func reset() {
        lock.withLock {
            paused = false
            wakeRequested = false
        }
    }

    /// Whether the write callback must pause libcurl (return `CURL_WRITEFUNC_PAUSE`) instead of
    /// delivering: the transfer is paused already, or the task's client `builtIn` cannot take more
    /// data now. Without one (another client) the transfer never pauses.
    func shouldPause(for builtIn: (any BuiltInHandlerClient)?) -> Bool {
        guard let builtIn else { return false }
        return shouldPause(asking: { builtIn.canAcceptMoreData })
    }

    /// The same, asking `canAcceptMoreData` (the consumer's answer) as often as needed.
    func shouldPause(asking canAcceptMoreData: () -> Bool) -> Bool {
        while true {
            let alreadyPaused: Bool = lock.withLock {
                if paused { return true }
                wakeRequested = false
                return false
            }
            if alreadyPaused { return true }
            if canAcceptMoreData() { return false }
            let pausing: Bool = lock.withLock {
                guard !wakeRequested else { return false }
                paused = true
                return true
            }
            if pausing { return true }
            // The consumer woke the transfer while it was being asked: ask it again.
        }
    }

    /// The consumer wants more data: whether the transfer is paused and must be unpaused now.
    /// Otherwise the wake-up is remembered for a write callback that is deciding to pause.
    func wake() -> Bool {
        lock.withLock {
            if paused {
                paused = false
                return true
            }
            wakeRequested = true
            return false
        }
    }
}
