import Foundation

/// The task a ``WebSocketURLProtocol`` serves: it takes the connection over once the handshake
/// succeeded. `URLSessionWebSocketTask` adopts it; the handler finds it as its `task`, so the
/// handler layer never names the task's class. A handler whose task does not adopt it (a data task
/// given a ws URL) fails with `unsupportedURL`.
protocol WebSocketTransportOwner: AnyObject, Sendable {
    /// The handshake succeeded (the 101 was reported to the client first): `transport` is open,
    /// `selectedProtocol` is the server's choice, and `initialBytes` arrived right after the head
    /// (the first frames). Called on the loop thread; the owner makes itself the transport's
    /// delegate before it returns. A `handler` that is no longer the task's current load is
    /// refused: the owner then closes the transport.
    func webSocketHandler(_ handler: URLProtocol, didOpen transport: WebSocketTransport,
                          selectedProtocol: String?, initialBytes: Data)
}
