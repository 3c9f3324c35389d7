import Foundation

/// A socket that Courier reads and writes itself, served by a session's ``CurlMultiLoop`` beside
/// libcurl's own: a WebSocket connection (opened by libcurl with `CURLOPT_CONNECT_ONLY`, then moved
/// with `curl_easy_send`/`curl_easy_recv`) or a stream task's socket. Its readiness comes from the
/// same epoll set, on the same thread, so such a connection costs no thread of its own.
///
/// The one way to use it, from any thread (each is a command the loop applies before it sleeps
/// again, in the order given):
/// - ``CurlMultiLoop/watch(_:for:readable:writable:)`` registers the socket (or changes its
///   interest; with none it leaves the epoll set but stays the client's);
/// - ``CurlMultiLoop/service(_:)`` asks for a pass with no readiness (new work, or bytes a TLS layer
///   holds where epoll cannot see them);
/// - ``CurlMultiLoop/unwatch(_:then:)`` forgets the socket and then runs its closure on the loop
///   thread, where the socket is closed or handed on: no libcurl socket can take the descriptor's
///   number while the loop still knows it.
protocol CurlLoopSocketClient: AnyObject, Sendable {
    /// Does the client's non-blocking I/O. `readable` and `writable`: what epoll reported (an error
    /// or hang-up counts as both); both `false` for a requested ``CurlMultiLoop/service(_:)`` pass,
    /// which may also come after the socket was forgotten (the client then does nothing). On the
    /// loop thread with its drive lock held: short, non-blocking work only, and no call that may
    /// take a lock the client's callers hold while they submit commands.
    func serviceSocket(on loop: CurlMultiLoop, readable: Bool, writable: Bool)

    /// The loop stopped (its session was invalidated) and forgot the socket: the client closes its
    /// connection. May come more than once (a queued command abandoned, and the table), on whichever
    /// thread stopped the loop, or, for a `watch` or `service` submitted while the loop stops, soon
    /// after on another thread: never within the client's own call to the loop, so the client may
    /// take here the lock it holds while it calls the loop.
    func loopDidStop()
}
