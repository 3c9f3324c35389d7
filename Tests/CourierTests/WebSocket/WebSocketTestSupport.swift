import Foundation
@testable import Courier

/// Raw frames, a repeatable random generator and a comparable view of the state machine's
/// actions, for the WebSocket protocol core's tests.
enum WebSocketTestSupport {
    /// How a frame's payload length is written.
    enum LengthForm {
        /// The shortest form (7, 16 or 64 bits), as senders must.
        case minimal
        /// Always the 16-bit form.
        case sixteenBit
        /// Always the 64-bit form.
        case sixtyFourBit
    }

    /// A frame's bytes written by hand (not by the encoder under test): a raw first byte (FIN,
    /// RSV bits and opcode), the length in the given form, and the payload, masked with `mask`.
    static func rawFrame(firstByte: UInt8, payload: [UInt8], mask: WebSocketMaskingKey? = nil,
                         lengthForm: LengthForm = .minimal) -> [UInt8] {
        var bytes: [UInt8] = [firstByte]
        let maskBit: UInt8 = mask == nil ? 0 : 0x80
        let count = payload.count
        switch (lengthForm, count) {
        case (.minimal, 0...125):
            bytes.append(maskBit | UInt8(count))
        case (.minimal, 126...0xFFFF), (.sixteenBit, _):
            bytes += [maskBit | 126, UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)]
        default:
            bytes.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(UInt64(count) >> UInt64(shift) & 0xFF)) }
        }
        guard let mask else { return bytes + payload }
        let key = (0..<4).map { mask.byte(at: $0) }
        return bytes + key + payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
    }

    /// A frame from the server: unmasked, FIN and opcode as given.
    static func serverFrame(_ opcode: WebSocketOpcode, fin: Bool = true, _ payload: [UInt8] = []) -> [UInt8] {
        rawFrame(firstByte: (fin ? 0x80 : 0) | opcode.rawValue, payload: payload)
    }

    /// A server's close frame with this code and reason.
    static func serverClose(_ code: UInt16, _ reason: String = "") -> [UInt8] {
        serverFrame(.close, [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8))
    }

    /// Decodes `bytes` fed in pieces cut at `cuts` (offsets, ascending), collecting every frame.
    static func decode(_ bytes: [UInt8], cuttingAt cuts: [Int] = [], role: WebSocketRole = .client,
                       maximumPayloadLength: Int = 1 << 20) throws(WebSocketProtocolError) -> [WebSocketFrame] {
        var decoder = WebSocketFrameDecoder(role: role, maximumPayloadLength: maximumPayloadLength)
        var frames: [WebSocketFrame] = []
        var from = 0
        for cut in cuts + [bytes.count] {
            decoder.append(bytes[from..<cut])
            from = cut
            while let frame = try decoder.nextFrame() { frames.append(frame) }
        }
        return frames
    }

    /// The frames in bytes a client wrote, decoded as the server would (so unmasked ones fail).
    static func clientFrames(_ bytes: Data) throws(WebSocketProtocolError) -> [WebSocketFrame] {
        try decode(Array(bytes), role: .server)
    }

    /// One client frame written by the state machine or the encoder.
    static func clientFrame(_ bytes: Data) throws -> WebSocketFrame {
        let frames = try clientFrames(bytes)
        guard frames.count == 1, let frame = frames.first else { throw Unexpected(detail: "\(frames.count) frames written") }
        return frame
    }

    /// A failure of the test's own assumptions.
    struct Unexpected: Error {
        let detail: String
    }
}

/// A `WebSocketConnectionAction` in a form tests can compare: written bytes decoded into the
/// client frames they hold (failing if they are not masked), messages as their text or data.
enum SeenAction: Equatable {
    case write(WebSocketFrame)
    case text(String)
    case binary(Data)
    case resolvePings(Int)
    case closeTransport
    case finish(WebSocketConnectionEnd)

    /// The actions, converted in order.
    static func of(_ actions: [WebSocketConnectionAction]) throws -> [SeenAction] {
        try actions.map { action in
            switch action {
            case .write(let bytes): return .write(try WebSocketTestSupport.clientFrame(bytes))
            case .deliver(.string(let text)): return .text(text)
            case .deliver(.data(let data)): return .binary(data)
            case .resolvePings(let count): return .resolvePings(count)
            case .closeTransport: return .closeTransport
            case .finish(let end): return .finish(end)
            }
        }
    }

    /// A client close frame carrying this code (and reason).
    static func writeClose(_ code: UInt16?, _ reason: String = "") -> SeenAction {
        .write(WebSocketFrame(opcode: .close, payload: WebSocketCloseFrame(code: code, reason: Data(reason.utf8)).payload))
    }
}
