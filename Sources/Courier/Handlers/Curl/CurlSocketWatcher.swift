import Foundation

/// Something that reads and writes a socket itself, on a ``CurlMultiLoop``'s thread: a connection
/// libcurl opened with `CURLOPT_CONNECT_ONLY` (proxy tunnel and TLS included) and then left to
/// `curl_easy_send` and `curl_easy_recv` — a WebSocket's. The loop's epoll set watches the socket
/// beside libcurl's own (``CurlMultiLoop/watch(_:for:readable:writable:)``), so such connections
/// need no thread of their own.
protocol CurlSocketWatcher: AnyObject, Sendable {
    /// The socket is readable and/or writable (an error or hang-up counts as both). Called on the
    /// loop thread with its drive lock held: do short, non-blocking work only.
    func socketIsReady(readable: Bool, writable: Bool)

    /// The loop stopped (its session went away) and forgot the socket: the watcher closes its
    /// connection. Called once, on whichever thread stopped the loop.
    func loopDidStop()
}
