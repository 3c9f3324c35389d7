import Foundation
import Testing
@testable import Courier

/// `WebSocketFrameEncoder`: RFC 6455's examples byte for byte, the shortest length form, and
/// masking: always as a client, with a fresh key per frame, never as a server.
@Suite("WebSocket frame encoder")
struct WebSocketFrameEncoderTests {
    private typealias Support = WebSocketTestSupport
    private let hello = Data("Hello".utf8)

    @Test func rfc6455sMaskedHelloWithItsKey() {
        let bytes = hello.withUnsafeBytes {
            WebSocketFrameEncoder.encode(fin: true, opcode: .text, payload: $0, maskingKey: WebSocketMaskingKey(0x37, 0xFA, 0x21, 0x3D))
        }
        #expect(Array(bytes) == [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
    }

    @Test func rfc6455sUnmaskedHelloAsAServer() {
        let bytes = WebSocketFrameEncoder(role: .server).encode(WebSocketFrame(opcode: .text, payload: hello))
        #expect(Array(bytes) == [0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])
    }

    @Test func aFragmentWithoutFINAndAnEmptyPayload() {
        let bytes = WebSocketFrameEncoder(role: .server).encode(WebSocketFrame(fin: false, opcode: .binary))
        #expect(Array(bytes) == [0x02, 0x00])
    }

    @Test(arguments: [(0, 2), (125, 2), (126, 4), (65535, 4), (65536, 10), (100_000, 10)])
    func theShortestLengthForm(size: Int, headerLength: Int) {
        let bytes = WebSocketFrameEncoder(role: .server).encode(WebSocketFrame(opcode: .binary, payload: Data(count: size)))
        #expect(bytes.count == headerLength + size)
    }

    @Test(arguments: [0, 1, 7, 8, 9, 125, 126, 65535, 65536, 200_003])
    func aClientFrameIsMaskedAndTheServerRoleUnmasksIt(size: Int) throws {
        var generator = SplitMix64(seed: UInt64(size))
        let frame = WebSocketFrame(opcode: .binary, payload: Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
        let bytes = WebSocketFrameEncoder(role: .client).encode(frame, using: &generator)
        #expect(try Support.clientFrames(bytes) == [frame])
    }

    @Test func everyClientFrameGetsAFreshKey() {
        let encoder = WebSocketFrameEncoder(role: .client)
        let keys = (0..<64).map { _ in Array(encoder.encode(WebSocketFrame(opcode: .ping))[2..<6]) }
        #expect(Set(keys).count == keys.count)
    }

    @Test func theMaskedPayloadDiffersFromThePlainText() {
        var generator = SplitMix64(seed: 1)
        let payload = Data(repeating: 0x41, count: 64)
        let bytes = WebSocketFrameEncoder(role: .client).encode(WebSocketFrame(opcode: .binary, payload: payload), using: &generator)
        #expect(bytes[1] & 0x80 == 0x80 && Data(bytes.suffix(64)) != payload)
    }
}

/// `WebSocketMaskingKey.apply`: the eight-bytes-at-a-time XOR against the byte-by-byte definition,
/// at every length and alignment.
@Suite("WebSocket masking key")
struct WebSocketMaskingKeyTests {
    @Test func wordwiseMaskingMatchesTheDefinitionAtEveryLengthAndAlignment() {
        let key = WebSocketMaskingKey(0xDE, 0xAD, 0xBE, 0xEF)
        let keyBytes: [UInt8] = [0xDE, 0xAD, 0xBE, 0xEF]
        var mismatches: [String] = []
        for offset in 0..<8 {
            for length in 0..<40 {
                let plain = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }
                var storage = [UInt8](repeating: 0, count: offset) + plain
                storage.withUnsafeMutableBytes { all in key.apply(to: UnsafeMutableRawBufferPointer(rebasing: all[offset...])) }
                let expected = plain.enumerated().map { $0.element ^ keyBytes[$0.offset % 4] }
                if Array(storage[offset...]) != expected { mismatches.append("offset \(offset) length \(length)") }
            }
        }
        #expect(mismatches.isEmpty)
    }

    @Test func maskingTwiceGivesTheOriginalBack() {
        var bytes = Array("a masked payload, thirty-odd bytes".utf8)
        let original = bytes
        let key = WebSocketMaskingKey(1, 2, 3, 4)
        bytes.withUnsafeMutableBytes { key.apply(to: $0) }
        bytes.withUnsafeMutableBytes { key.apply(to: $0) }
        #expect(bytes == original)
    }
}
