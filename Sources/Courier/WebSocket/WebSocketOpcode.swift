/// A frame's opcode (RFC 6455 §5.2). The reserved values 0x3–0x7 and 0xB–0xF have no case: a
/// frame carrying one is a protocol error.
enum WebSocketOpcode: UInt8, Sendable {
    /// 0x0: the next fragment of a fragmented message.
    case continuation = 0x0
    /// 0x1: the first (or only) frame of a text message.
    case text = 0x1
    /// 0x2: the first (or only) frame of a binary message.
    case binary = 0x2
    /// 0x8: a close frame.
    case close = 0x8
    /// 0x9: a ping, answered with a pong carrying the same payload.
    case ping = 0x9
    /// 0xA: a pong.
    case pong = 0xA

    /// Whether this is a control frame's opcode (close, ping, pong): at most 125 bytes of payload,
    /// never fragmented, allowed between the fragments of a message.
    var isControl: Bool { rawValue & 0x8 != 0 }
}
