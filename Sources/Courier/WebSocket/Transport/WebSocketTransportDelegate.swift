import Foundation

/// Who hears what a ``WebSocketTransport`` reads: the handler while it reads the handshake's
/// answer, then the WebSocket task. Called on the session's libcurl loop thread, with no lock of
/// the transport held, in the order the bytes arrived.
protocol WebSocketTransportDelegate: AnyObject, Sendable {
    /// Bytes arrived from the peer.
    func transport(_ transport: WebSocketTransport, didReceive bytes: UnsafeRawBufferPointer)

    /// The connection ended: the peer closed it, it failed (`error`), or the session went away.
    /// Called at most once, and not after the owner's own ``WebSocketTransport/close()``.
    func transport(_ transport: WebSocketTransport, didCloseWith error: URLError?)
}
