import Foundation

/// Turns frames into bytes for the wire (RFC 6455 §5.2): the shortest length encoding, reserved
/// bits clear, and — as a client — the payload masked with a fresh random key for every frame.
/// As a server it never masks.
///
/// The encoder writes what it is given: keeping control frames at 125 bytes and unfragmented is
/// the caller's part (`WebSocketConnectionStateMachine` does).
struct WebSocketFrameEncoder: Sendable {
    /// Which end the encoder writes for.
    let role: WebSocketRole

    /// Creates an encoder.
    init(role: WebSocketRole = .client) {
        self.role = role
    }

    /// The frame's bytes; a client's are masked with a key from the system's random generator.
    func encode(_ frame: WebSocketFrame) -> Data {
        var generator = WebSocketRandom()
        return encode(frame, using: &generator)
    }

    /// The frame's bytes; a client's are masked with a key drawn from `generator`.
    func encode(_ frame: WebSocketFrame, using generator: inout some RandomNumberGenerator) -> Data {
        frame.payload.withUnsafeBytes { payload in
            encode(fin: frame.fin, opcode: frame.opcode, payload: payload, using: &generator)
        }
    }

    /// A frame's bytes from a payload in memory, copied once (a text message's UTF-8 need not
    /// become a `Data` first).
    func encode(fin: Bool, opcode: WebSocketOpcode, payload: UnsafeRawBufferPointer,
                using generator: inout some RandomNumberGenerator) -> Data {
        let key: WebSocketMaskingKey? = role == .client ? .random(using: &generator) : nil
        return WebSocketFrameEncoder.encode(fin: fin, opcode: opcode, payload: payload, maskingKey: key)
    }

    /// A frame's bytes with the given masking key (`nil`: unmasked): the header written in place
    /// and the payload copied once, masked as it is copied.
    static func encode(fin: Bool, opcode: WebSocketOpcode, payload: UnsafeRawBufferPointer,
                       maskingKey: WebSocketMaskingKey?) -> Data {
        let length = payload.count
        let lengthFieldCount = length <= 125 ? 0 : (length <= 0xFFFF ? 2 : 8)
        let headerLength = 2 + lengthFieldCount + (maskingKey == nil ? 0 : 4)
        var bytes = Data(count: headerLength + length)
        bytes.withUnsafeMutableBytes { frame in
            frame[0] = (fin ? 0x80 : 0) | opcode.rawValue
            let maskBit: UInt8 = maskingKey == nil ? 0 : 0x80
            switch lengthFieldCount {
            case 0:
                frame[1] = maskBit | UInt8(length)
            case 2:
                frame[1] = maskBit | 126
                frame[2] = UInt8(truncatingIfNeeded: length >> 8)
                frame[3] = UInt8(truncatingIfNeeded: length)
            default:
                frame[1] = maskBit | 127
                for index in 0..<8 {
                    frame[2 + index] = UInt8(truncatingIfNeeded: UInt64(length) >> UInt64(56 - 8 * index))
                }
            }
            let body = UnsafeMutableRawBufferPointer(rebasing: frame[headerLength...])
            if let maskingKey {
                for index in 0..<4 { frame[headerLength - 4 + index] = maskingKey.byte(at: index) }
                maskingKey.apply(from: payload, to: body)
            } else if length > 0 {
                body.copyMemory(from: payload)
            }
        }
        return bytes
    }
}
