import Foundation

/// One WebSocket frame as the codec sees it: the FIN bit, the opcode and the payload, unmasked.
///
/// The reserved bits are not represented: Courier negotiates no extension, so they are always
/// sent clear, and a received frame with one set is a protocol error. The mask is not kept
/// either: the decoder removes it and the encoder adds a fresh one.
struct WebSocketFrame: Equatable, Sendable {
    /// Whether this is the last frame of its message (always `true` for control frames).
    var fin: Bool
    /// What the frame carries.
    var opcode: WebSocketOpcode
    /// The application data, unmasked.
    var payload: Data

    /// Creates a frame.
    init(fin: Bool = true, opcode: WebSocketOpcode, payload: Data = Data()) {
        self.fin = fin
        self.opcode = opcode
        self.payload = payload
    }

    /// The largest payload a control frame may carry (RFC 6455 §5.5).
    static let maximumControlPayloadLength = 125
}
