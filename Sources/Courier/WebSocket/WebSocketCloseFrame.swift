import Foundation

/// The payload of a close frame (RFC 6455 §5.5.1): an optional 2-byte status code, then a reason
/// in UTF-8 that only a status code may precede.
struct WebSocketCloseFrame: Equatable, Sendable {
    /// The status code as on the wire, or `nil` for an empty close frame.
    var code: UInt16?
    /// The reason's bytes (UTF-8), empty when there is none.
    var reason: Data

    /// The longest reason a close frame can carry: 125 bytes of control payload less the code.
    static let maximumReasonLength = WebSocketFrame.maximumControlPayloadLength - 2

    /// A close frame with this code and reason (a reason without a code is not encoded).
    init(code: UInt16?, reason: Data = Data()) {
        self.code = code
        self.reason = reason
    }

    /// The close frame Courier sends for the app's `cancel(with:reason:)`.
    ///
    /// - A code that must not be sent (`.invalid`, 1005, 1006, 1015) gives an empty close frame,
    ///   which tells the peer "no status": there is no code to carry the reason with.
    /// - A reason that is not UTF-8 is left out (the peer would have to fail the connection for it).
    /// - A longer reason is cut to 123 bytes, at the start of a UTF-8 sequence so it stays valid.
    init(sending code: WebSocketCloseCode, reason: Data?) {
        guard code.isSendable else {
            self.init(code: nil)
            return
        }
        var kept = Data()
        if let reason, WebSocketCloseFrame.isUTF8(reason) {
            kept = Data(reason)
            if kept.count > WebSocketCloseFrame.maximumReasonLength {
                var end = WebSocketCloseFrame.maximumReasonLength
                while end > 0, kept[end] & 0xC0 == 0x80 { end -= 1 }
                kept = kept.prefix(end)
            }
        }
        self.init(code: UInt16(code.rawValue), reason: kept)
    }

    /// Parses and checks a received close frame's payload.
    ///
    /// - Throws: `closePayloadTooShort` (one byte), `invalidCloseCode` (a code not allowed on the
    ///   wire, see `isValidOnTheWire`), `invalidCloseReason` (not UTF-8).
    init(payload: Data) throws(WebSocketProtocolError) {
        let bytes = Data(payload)
        switch bytes.count {
        case 0:
            self.init(code: nil)
        case 1:
            throw .closePayloadTooShort
        default:
            let code = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
            guard WebSocketCloseFrame.isValidOnTheWire(code) else { throw .invalidCloseCode(code) }
            let reason = bytes.dropFirst(2)
            guard WebSocketCloseFrame.isUTF8(reason) else { throw .invalidCloseReason }
            self.init(code: code, reason: Data(reason))
        }
    }

    /// The frame's payload: the code big-endian, then the reason; empty without a code.
    var payload: Data {
        guard let code else { return Data() }
        var bytes = Data([UInt8(truncatingIfNeeded: code >> 8), UInt8(truncatingIfNeeded: code)])
        bytes.append(reason)
        return bytes
    }

    /// Whether a close frame may carry `code` (RFC 6455 §7.4): the defined codes 1000–1003 and
    /// 1007–1011, the IANA-registered 1012–1014, and 3000–4999 (libraries, frameworks and
    /// applications). Below 1000, 1004–1006, 1015–2999 and from 5000 on are refused.
    static func isValidOnTheWire(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: return true
        default: return false
        }
    }

    /// Whether `bytes` are UTF-8.
    private static func isUTF8(_ bytes: Data) -> Bool {
        var validator = WebSocketUTF8Validator()
        return bytes.withUnsafeBytes { validator.validate($0) } && validator.isAtCodePointBoundary
    }
}
