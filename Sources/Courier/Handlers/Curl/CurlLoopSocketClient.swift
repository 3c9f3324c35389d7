import Foundation

/// A socket that is not libcurl's, served by a session's ``CurlMultiLoop`` (a stream task's
/// connection): its readiness comes from the same epoll set, on the same thread, so a stream task
/// costs no thread of its own.
///
/// The client's I/O runs only inside ``serviceSocket(on:readable:writable:)``, with the loop's
/// drive lock held: once for each readiness the loop saw, and once for each ``CurlMultiLoop/service(_:)``
/// request. There it registers its socket (``CurlMultiLoop/watch(_:readable:writable:for:)``), and
/// unregisters it (``CurlMultiLoop/unwatch(clientSocket:)``) before closing it.
protocol CurlLoopSocketClient: AnyObject, Sendable {
    /// Does the client's non-blocking I/O. `readable` and `writable`: what epoll reported (both
    /// `false` for a requested service). On the thread driving the loop, drive lock held: short,
    /// non-blocking work only, and no call that may take a lock the client's callers hold.
    func serviceSocket(on loop: CurlMultiLoop, readable: Bool, writable: Bool)

    /// The loop stopped (its session was invalidated): the client's socket is no longer served.
    func loopDidStop()
}
