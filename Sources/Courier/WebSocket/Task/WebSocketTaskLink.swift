import Foundation

/// What ties a WebSocket task to its open connection: the transport and the handler that opened it
/// (through which the task reports its end to the task engine, as any load's end is reported). Set
/// once, when the handshake succeeds.
struct WebSocketTaskLink: Sendable {
    /// The connection, once open.
    var transport: WebSocketTransport?
    /// The handler that opened it.
    var handler: WebSocketURLProtocol?
}
