/// Which end of a WebSocket connection the codec speaks for; it decides masking (RFC 6455 §5.3).
///
/// Courier is a client: its frames are masked and the server's must not be. The server role exists
/// so that tests and the fuzz harness can decode what the client encodes.
enum WebSocketRole: Sendable {
    /// Sends masked frames; a masked frame received is a protocol error.
    case client
    /// Sends unmasked frames; an unmasked frame received is a protocol error.
    case server
}
