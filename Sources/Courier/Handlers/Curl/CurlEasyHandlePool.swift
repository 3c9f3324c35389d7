internal import CCurl
import Foundation

/// Easy handles of a session's finished http(s) transfers, reset and kept for its next ones.
///
/// A new easy handle costs libcurl a large zeroed allocation and, on its first transfer, a receive
/// buffer; `curl_easy_reset` clears every option of a used one but keeps those (and its TLS session
/// cache), as the curl command line does when it reuses one handle for many URLs. Only handles of
/// one kind share a pool, so that the receive buffer a handle keeps always has the size its next
/// transfer asks for (``CurlMultiLoop`` keeps one pool, for http).
final class CurlEasyHandlePool: @unchecked Sendable {
    private let lock = Lock()
    private var idle: [UnsafeMutableRawPointer] = []
    private let capacity: Int
    private var closed = false

    /// A pool keeping at most `capacity` idle handles (more are cleaned up when they come back).
    init(capacity: Int) {
        self.capacity = capacity
    }

    deinit {
        for easy in idle { curl_easy_cleanup(easy) }
    }

    /// An idle handle, or a new one; `nil` if libcurl cannot make one.
    func take() -> UnsafeMutableRawPointer? {
        if let easy = lock.withLock({ idle.popLast() }) { return easy }
        return curl_easy_init()
    }

    /// Takes back a handle that is in no multi handle any more: reset for the next transfer, or
    /// cleaned up when the pool is full or closed.
    func recycle(_ easy: UnsafeMutableRawPointer) {
        curl_easy_reset(easy)
        let kept: Bool = lock.withLock {
            guard !closed, idle.count < capacity else { return false }
            idle.append(easy)
            return true
        }
        if !kept { curl_easy_cleanup(easy) }
    }

    /// Cleans up the idle handles and keeps no more (the session's loop stopped).
    func close() {
        let handles: [UnsafeMutableRawPointer] = lock.withLock {
            closed = true
            defer { idle.removeAll() }
            return idle
        }
        for easy in handles { curl_easy_cleanup(easy) }
    }
}
