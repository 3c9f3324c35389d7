import Foundation

/// How a WebSocket connection ended, as the connection state machine reports it once.
enum WebSocketConnectionEnd: Equatable, Sendable {
    /// The close handshake completed; this is the peer's close frame.
    case closed(WebSocketCloseFrame)
    /// The connection failed, or closed before the handshake completed.
    case failed(WebSocketConnectionError)

    /// The connection's close code (RFC 6455 §7.1.5): that of the peer's close frame
    /// (`.noStatusReceived` when it had none), and `.abnormalClosure` when no close frame was
    /// received — also when Courier failed the connection itself.
    var closeCode: WebSocketCloseCode {
        switch self {
        case .closed(let frame): return WebSocketCloseCode(peerCode: frame.code)
        case .failed: return .abnormalClosure
        }
    }

    /// The reason in the peer's close frame (`nil` when it had none or none was received), for
    /// `closeReason`.
    var closeReason: Data? {
        guard case .closed(let frame) = self, !frame.reason.isEmpty else { return nil }
        return frame.reason
    }
}
