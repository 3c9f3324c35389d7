/// A violation of RFC 6455 by the peer, found by the frame decoder, the message assembler or the
/// connection state machine. Each one names the status code the close frame that fails the
/// connection carries (RFC 6455 §7.4.1): 1002 for a malformed frame or sequence, 1007 for text
/// that is not UTF-8, 1009 for a message over the size limit.
enum WebSocketProtocolError: Error, Equatable, Sendable {
    /// A frame with RSV1, RSV2 or RSV3 set: no extension was negotiated that gives them a meaning.
    case reservedBitsSet
    /// A frame whose opcode is one of the reserved values (0x3–0x7, 0xB–0xF).
    case unknownOpcode(UInt8)
    /// A masked frame from a server (servers never mask, §5.1).
    case maskedFrameFromServer
    /// An unmasked frame from a client (clients always mask, §5.1).
    case unmaskedFrameFromClient
    /// A 64-bit payload length with its most significant bit set (§5.2).
    case payloadLengthOutOfRange
    /// A control frame with FIN clear: control frames cannot be fragmented (§5.5).
    case fragmentedControlFrame
    /// A control frame announcing more than 125 bytes of payload (§5.5).
    case controlFrameTooLong(UInt64)
    /// A continuation frame while no fragmented message is open (§5.4).
    case continuationWithoutStart
    /// A text or binary frame while a fragmented message is still open (§5.4).
    case newMessageDuringFragmentedMessage
    /// A message (or a single frame of one) longer than the maximum message size.
    case messageTooBig
    /// A text message whose bytes are not UTF-8 (§8.1), found as early as the bad byte arrives.
    case invalidUTF8
    /// A close frame with exactly one byte of payload: too short for a status code (§5.5.1).
    case closePayloadTooShort
    /// A close frame whose status code must not appear on the wire (§7.4): below 1000, 1004,
    /// 1005, 1006, 1015, 1016–2999, or 5000 and above.
    case invalidCloseCode(UInt16)
    /// A close frame whose reason is not UTF-8 (§5.5.1).
    case invalidCloseReason

    /// The status code of the close frame Courier sends when this error fails the connection.
    var closeCode: WebSocketCloseCode {
        switch self {
        case .invalidUTF8, .invalidCloseReason: return .invalidFramePayloadData
        case .messageTooBig: return .messageTooBig
        default: return .protocolError
        }
    }

    /// What went wrong, for an error's description.
    var reason: String {
        switch self {
        case .reservedBitsSet: return "a frame had a reserved bit set without a negotiated extension"
        case .unknownOpcode(let opcode): return "a frame had the reserved opcode \(opcode)"
        case .maskedFrameFromServer: return "the server sent a masked frame"
        case .unmaskedFrameFromClient: return "the client sent an unmasked frame"
        case .payloadLengthOutOfRange: return "a frame's 64-bit payload length had its most significant bit set"
        case .fragmentedControlFrame: return "a control frame was fragmented"
        case .controlFrameTooLong(let length): return "a control frame announced \(length) bytes of payload (at most 125 are allowed)"
        case .continuationWithoutStart: return "a continuation frame arrived with no fragmented message open"
        case .newMessageDuringFragmentedMessage: return "a new message started before the fragmented one was finished"
        case .messageTooBig: return "a message was longer than the maximum message size"
        case .invalidUTF8: return "a text message was not valid UTF-8"
        case .closePayloadTooShort: return "a close frame had a one-byte payload"
        case .invalidCloseCode(let code): return "a close frame carried the status code \(code), which is not allowed on the wire"
        case .invalidCloseReason: return "a close frame's reason was not valid UTF-8"
        }
    }
}
