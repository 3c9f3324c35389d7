#if COURIER_FUZZ
@testable import Courier
import Foundation

/// `WebSocketFrameDecoder` and `WebSocketConnectionStateMachine` on bytes from a server, cut in two
/// at an offset the first byte picks. Decoded whole or cut, the input gives the same frames and the
/// same error; each frame re-encodes (unmasked, as a server) and decodes to itself; the state
/// machine, fed the same two pieces and then the transport's end, reports exactly one end as its
/// last action, and writes only masked client frames: pongs and close frames within 125 bytes.
enum WebSocketFramesHarness {
    private struct Decoded: Equatable {
        var frames: [WebSocketFrame] = []
        var error: WebSocketProtocolError?
    }

    private static let limit = 64 * 1024

    static func run(_ input: Data) {
        let bytes = Array(input)
        let cut = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
        let whole = decode(bytes, cuttingAt: [])
        let split = decode(bytes, cuttingAt: [cut])
        fuzzCheck(whole == split, "cut at \(cut): \(split) instead of \(whole)")

        let server = WebSocketFrameEncoder(role: .server)
        for frame in whole.frames {
            let again = decode(Array(server.encode(frame)), cuttingAt: [])
            fuzzCheck(again == Decoded(frames: [frame]), "\(frame) re-encoded decodes to \(again)")
        }

        var machine = WebSocketConnectionStateMachine(maximumMessageSize: limit)
        let actions = machine.receivedBytes(bytes[..<cut]) + machine.receivedBytes(bytes[cut...]) + machine.transportClosed()
        let ends = actions.indices.filter { if case .finish = actions[$0] { return true } else { return false } }
        fuzzCheck(ends == [actions.count - 1], "the end is reported at \(ends) of \(actions.count) actions")
        for case .write(let written) in actions {
            var reader = WebSocketFrameDecoder(role: .server, maximumPayloadLength: 0)
            reader.append(written)
            let frame = try? reader.nextFrame()
            fuzzCheck(frame.map { ($0.opcode == .pong || $0.opcode == .close) && $0.payload.count <= 125 } == true
                          && reader.bufferedByteCount == 0,
                      "wrote \(Array(written))")
        }
    }

    private static func decode(_ bytes: [UInt8], cuttingAt cuts: [Int]) -> Decoded {
        var decoder = WebSocketFrameDecoder(role: .client, maximumPayloadLength: limit)
        var decoded = Decoded()
        var from = 0
        for cut in cuts + [bytes.count] {
            decoder.append(bytes[from..<cut])
            from = cut
            do {
                while let frame = try decoder.nextFrame() { decoded.frames.append(frame) }
            } catch {
                decoded.error = error
                return decoded
            }
        }
        return decoded
    }
}
#endif
