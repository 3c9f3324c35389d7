import Foundation
import Testing
@testable import Courier

/// `WebSocketFrameDecoder`: RFC 6455's examples, every split of the input, the three length forms,
/// and each malformed header refused as soon as its byte arrives.
@Suite("WebSocket frame decoder")
struct WebSocketFrameDecoderTests {
    private typealias Support = WebSocketTestSupport
    private let hello = Array("Hello".utf8)

    // MARK: RFC 6455 §5.7

    @Test func aSingleUnmaskedTextFrame() throws {
        let frames = try Support.decode([0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])
        #expect(frames == [WebSocketFrame(opcode: .text, payload: Data(hello))])
    }

    @Test func aSingleMaskedTextFrameDecodedAsTheServer() throws {
        let frames = try Support.decode([0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58], role: .server)
        #expect(frames == [WebSocketFrame(opcode: .text, payload: Data(hello))])
    }

    @Test func aFragmentedUnmaskedTextMessage() throws {
        let frames = try Support.decode([0x01, 0x03, 0x48, 0x65, 0x6C, 0x80, 0x02, 0x6C, 0x6F])
        #expect(frames == [WebSocketFrame(fin: false, opcode: .text, payload: Data("Hel".utf8)),
                           WebSocketFrame(opcode: .continuation, payload: Data("lo".utf8))])
    }

    @Test func anUnmaskedPingAndAMaskedPong() throws {
        let ping = try Support.decode([0x89, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])
        let pong = try Support.decode([0x8A, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58], role: .server)
        #expect(ping + pong == [WebSocketFrame(opcode: .ping, payload: Data(hello)), WebSocketFrame(opcode: .pong, payload: Data(hello))])
    }

    @Test func aBinaryFrameOf256BytesWithA16BitLength() throws {
        let payload = (0..<256).map { UInt8($0 & 0xFF) }
        let frames = try Support.decode([0x82, 0x7E, 0x01, 0x00] + payload)
        #expect(frames == [WebSocketFrame(opcode: .binary, payload: Data(payload))])
    }

    @Test func aBinaryFrameOf64KiBWithA64BitLength() throws {
        let payload = (0..<65536).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let frames = try Support.decode([0x82, 0x7F, 0, 0, 0, 0, 0, 0x01, 0x00, 0x00] + payload)
        #expect(frames == [WebSocketFrame(opcode: .binary, payload: Data(payload))])
    }

    // MARK: Splits

    /// Three frames (a 7-bit, a 16-bit and a 64-bit length, with a ping between) cut once at every
    /// offset decode to the same frames.
    @Test func everySingleSplitGivesTheSameFrames() throws {
        let stream = Support.serverFrame(.text, fin: false, Array("ab".utf8))
            + Support.serverFrame(.ping, [1, 2, 3])
            + Support.rawFrame(firstByte: 0x00, payload: Array(repeating: 0x61, count: 300))
            + Support.rawFrame(firstByte: 0x80, payload: [0x62], lengthForm: .sixtyFourBit)
        let whole = try Support.decode(stream)
        let split = try (1..<stream.count).map { cut throws in try Support.decode(stream, cuttingAt: [cut]) }
        #expect(whole.count == 4 && split.allSatisfy { $0 == whole })
    }

    @Test func byteByByteGivesTheSameFrames() throws {
        let stream = Support.serverFrame(.binary, Array(repeating: 0x42, count: 200)) + Support.serverClose(1000, "bye")
        let frames = try Support.decode(stream, cuttingAt: Array(1..<stream.count))
        #expect(frames == [WebSocketFrame(opcode: .binary, payload: Data(repeating: 0x42, count: 200)),
                           WebSocketFrame(opcode: .close, payload: Data([0x03, 0xE8] + Array("bye".utf8)))])
    }

    @Test func nothingComesOutUntilTheLastPayloadByteArrives() throws {
        let frame = Support.serverFrame(.binary, Array(repeating: 7, count: 130))
        var decoder = WebSocketFrameDecoder()
        var early: [WebSocketFrame] = []
        for byte in frame.dropLast() {
            decoder.append([byte])
            if let frame = try decoder.nextFrame() { early.append(frame) }
        }
        decoder.append(frame.suffix(1))
        let last = try decoder.nextFrame()
        #expect(early.isEmpty && last?.payload.count == 130 && decoder.bufferedByteCount == 0)
    }

    // MARK: Lengths

    @Test(arguments: [0, 1, 125, 126, 127, 65535, 65536, 70001])
    func theShortestLengthFormOfEachSize(size: Int) throws {
        let payload = Array(repeating: UInt8(size & 0xFF), count: size)
        let frames = try Support.decode(Support.rawFrame(firstByte: 0x82, payload: payload))
        #expect(frames == [WebSocketFrame(opcode: .binary, payload: Data(payload))])
    }

    /// RFC 6455 asks senders for the shortest length form; the decoder accepts a longer one.
    @Test func aLengthNotInItsShortestFormIsAccepted() throws {
        let frames = try Support.decode(Support.rawFrame(firstByte: 0x81, payload: hello, lengthForm: .sixteenBit)
                                        + Support.rawFrame(firstByte: 0x81, payload: hello, lengthForm: .sixtyFourBit))
        #expect(frames == Array(repeating: WebSocketFrame(opcode: .text, payload: Data(hello)), count: 2))
    }

    @Test func aSixtyFourBitLengthWithItsTopBitSetIsRefused() {
        #expect(throws: WebSocketProtocolError.payloadLengthOutOfRange) {
            try Support.decode([0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0x05])
        }
    }

    @Test func aDataFrameOverTheLimitIsRefusedFromItsHeaderAlone() {
        var decoder = WebSocketFrameDecoder(maximumPayloadLength: 1000)
        decoder.append([0x82, 0x7E, 0x03, 0xE9])
        #expect(throws: WebSocketProtocolError.messageTooBig) { try decoder.nextFrame() }
    }

    @Test func aDataFrameExactlyAtTheLimitIsAccepted() throws {
        let frames = try Support.decode(Support.serverFrame(.binary, Array(repeating: 1, count: 1000)), maximumPayloadLength: 1000)
        #expect(frames.map(\.payload.count) == [1000])
    }

    @Test func controlFramesAreNotHeldToTheDataFrameLimit() throws {
        let frames = try Support.decode(Support.serverFrame(.ping, hello), maximumPayloadLength: 0)
        #expect(frames.map(\.payload) == [Data(hello)])
    }

    // MARK: Malformed headers

    @Test(arguments: [UInt8(0xC1), 0xA1, 0x91, 0xF1])
    func aReservedBitIsRefusedFromTheFirstByte(firstByte: UInt8) {
        #expect(throws: WebSocketProtocolError.reservedBitsSet) { try Support.decode([firstByte]) }
    }

    @Test(arguments: [UInt8(0x3), 0x4, 0x5, 0x6, 0x7, 0xB, 0xC, 0xD, 0xE, 0xF])
    func aReservedOpcodeIsRefused(opcode: UInt8) {
        #expect(throws: WebSocketProtocolError.unknownOpcode(opcode)) { try Support.decode([0x80 | opcode, 0x00]) }
    }

    @Test func aMaskedFrameFromTheServerIsRefused() {
        #expect(throws: WebSocketProtocolError.maskedFrameFromServer) {
            try Support.decode(Support.rawFrame(firstByte: 0x81, payload: hello, mask: WebSocketMaskingKey(1, 2, 3, 4)))
        }
    }

    @Test func anUnmaskedFrameFromAClientIsRefusedByTheServerRole() {
        #expect(throws: WebSocketProtocolError.unmaskedFrameFromClient) { try Support.decode([0x81, 0x05] + hello, role: .server) }
    }

    @Test(arguments: [UInt8(0x08), 0x09, 0x0A])
    func aFragmentedControlFrameIsRefused(firstByte: UInt8) {
        #expect(throws: WebSocketProtocolError.fragmentedControlFrame) { try Support.decode([firstByte, 0x00]) }
    }

    @Test(arguments: [UInt8(126), 127])
    func aControlFrameAnnouncingAnExtendedLengthIsRefused(lengthCode: UInt8) {
        #expect(throws: WebSocketProtocolError.controlFrameTooLong(UInt64(lengthCode))) { try Support.decode([0x89, lengthCode]) }
    }

    @Test func aControlFrameOf125BytesIsAccepted() throws {
        let frames = try Support.decode(Support.serverFrame(.ping, Array(repeating: 9, count: 125)))
        #expect(frames.map(\.payload.count) == [125])
    }

    @Test func theFirstErrorIsStickyAndLaterBytesAreIgnored() {
        var decoder = WebSocketFrameDecoder()
        decoder.append([0xC1])
        let first = Result { () throws(WebSocketProtocolError) in try decoder.nextFrame() }
        decoder.append(Support.serverFrame(.text, hello))
        let second = Result { () throws(WebSocketProtocolError) in try decoder.nextFrame() }
        #expect(first.error == .reservedBitsSet && second.error == .reservedBitsSet && decoder.bufferedByteCount == 0)
    }
}

private extension Result {
    /// The failure, if any.
    var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
