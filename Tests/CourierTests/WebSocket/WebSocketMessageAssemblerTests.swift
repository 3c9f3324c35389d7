import Foundation
import Testing
@testable import Courier

/// `WebSocketMessageAssembler`: fragments put together, text checked across fragment boundaries,
/// the size limit, and the sequencing errors.
@Suite("WebSocket message assembler")
struct WebSocketMessageAssemblerTests {
    private func frame(_ opcode: WebSocketOpcode, fin: Bool = true, _ bytes: [UInt8]) -> WebSocketFrame {
        WebSocketFrame(fin: fin, opcode: opcode, payload: Data(bytes))
    }

    /// The messages the frames complete, as text or hex, or the error that stopped them.
    private func assemble(_ frames: [WebSocketFrame], limit: Int = 1 << 20) -> Result<[String], WebSocketProtocolError> {
        var assembler = WebSocketMessageAssembler(maximumMessageSize: limit)
        var messages: [String] = []
        for frame in frames {
            do {
                switch try assembler.append(frame) {
                case .string(let text): messages.append("text:" + text)
                case .data(let data): messages.append("data:" + data.map { String($0, radix: 16) }.joined(separator: " "))
                case nil: break
                }
            } catch {
                return .failure(error)
            }
        }
        return .success(messages)
    }

    @Test func unfragmentedTextAndBinaryMessages() {
        #expect(assemble([frame(.text, Array("hi".utf8)), frame(.binary, [1, 0xFF])]) == .success(["text:hi", "data:1 ff"]))
    }

    @Test func aFragmentedTextMessage() {
        let frames = [frame(.text, fin: false, Array("Hel".utf8)), frame(.continuation, fin: false, []), frame(.continuation, Array("lo".utf8))]
        #expect(assemble(frames) == .success(["text:Hello"]))
    }

    @Test func aFragmentedBinaryMessage() {
        #expect(assemble([frame(.binary, fin: false, [1]), frame(.continuation, [2, 3])]) == .success(["data:1 2 3"]))
    }

    @Test func emptyMessages() {
        #expect(assemble([frame(.text, []), frame(.binary, [])]) == .success(["text:", "data:"]))
    }

    @Test func aCodePointSplitAcrossThreeFragments() {
        // U+1F600 😀 is F0 9F 98 80.
        let frames = [frame(.text, fin: false, [0x61, 0xF0]), frame(.continuation, fin: false, [0x9F, 0x98]), frame(.continuation, [0x80, 0x62])]
        #expect(assemble(frames) == .success(["text:a😀b"]))
    }

    @Test func invalidUTF8FailsAtTheFragmentThatHoldsIt() {
        // The second fragment makes the message invalid; the third is never needed.
        var assembler = WebSocketMessageAssembler()
        let first = Result { () throws(WebSocketProtocolError) in try assembler.append(frame(.text, fin: false, [0x61, 0xE2])) }
        let second = Result { () throws(WebSocketProtocolError) in try assembler.append(frame(.continuation, fin: false, [0x28])) }
        #expect(first.isSuccess && second.failure == .invalidUTF8 && !assembler.isAssembling)
    }

    @Test func aTextMessageEndingInsideACodePointIsInvalid() {
        #expect(assemble([frame(.text, fin: false, [0x61]), frame(.continuation, [0xE2, 0x82])]) == .failure(.invalidUTF8))
    }

    @Test func binaryMessagesAreNotCheckedAsUTF8() {
        #expect(assemble([frame(.binary, [0xFF, 0xFE])]) == .success(["data:ff fe"]))
    }

    @Test func aMessageExactlyAtTheLimitIsAccepted() {
        #expect(assemble([frame(.binary, fin: false, [1, 2]), frame(.continuation, [3, 4])], limit: 4) == .success(["data:1 2 3 4"]))
    }

    @Test func aFragmentedMessageOverTheLimitFailsWithTheFragmentThatPassesIt() {
        #expect(assemble([frame(.binary, fin: false, [1, 2, 3]), frame(.continuation, fin: false, [4, 5])], limit: 4)
                == .failure(.messageTooBig))
    }

    @Test func aSingleFrameOverTheLimitFails() {
        #expect(assemble([frame(.text, Array("12345".utf8))], limit: 4) == .failure(.messageTooBig))
    }

    @Test func aContinuationWithoutAStartFails() {
        #expect(assemble([frame(.continuation, [1])]) == .failure(.continuationWithoutStart))
    }

    @Test func aContinuationAfterACompleteMessageFails() {
        #expect(assemble([frame(.text, Array("a".utf8)), frame(.continuation, [0x62])]) == .failure(.continuationWithoutStart))
    }

    @Test(arguments: [WebSocketOpcode.text, .binary])
    func aNewMessageDuringAFragmentedOneFails(opcode: WebSocketOpcode) {
        #expect(assemble([frame(.binary, fin: false, [1]), frame(opcode, [0x62])]) == .failure(.newMessageDuringFragmentedMessage))
    }
}

private extension Result {
    var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }

    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
