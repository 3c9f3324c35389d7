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

    /// A frame's bytes with the given masking key (`nil`: unmasked).
    static func encode(fin: Bool, opcode: WebSocketOpcode, payload: UnsafeRawBufferPointer,
                       maskingKey: WebSocketMaskingKey?) -> Data {
        let length = payload.count
        var header = [UInt8]()
        header.reserveCapacity(14)
        header.append((fin ? 0x80 : 0) | opcode.rawValue)
        let maskBit: UInt8 = maskingKey == nil ? 0 : 0x80
        switch length {
        case 0...125:
            header.append(maskBit | UInt8(length))
        case 126...0xFFFF:
            header.append(maskBit | 126)
            header.append(UInt8(truncatingIfNeeded: length >> 8))
            header.append(UInt8(truncatingIfNeeded: length))
        default:
            header.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) {
                header.append(UInt8(truncatingIfNeeded: UInt64(length) >> UInt64(shift)))
            }
        }
        if let maskingKey {
            for index in 0..<4 { header.append(maskingKey.byte(at: index)) }
        }
        var bytes = Data(capacity: header.count + length)
        bytes.append(contentsOf: header)
        if let base = payload.baseAddress, length > 0 {
            bytes.append(base.assumingMemoryBound(to: UInt8.self), count: length)
        }
        if let maskingKey, length > 0 {
            let headerLength = header.count
            bytes.withUnsafeMutableBytes { all in
                maskingKey.apply(to: UnsafeMutableRawBufferPointer(rebasing: all[headerLength...]))
            }
        }
        return bytes
    }
}
