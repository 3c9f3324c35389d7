import Foundation
import Testing
@testable import Courier

/// `WebSocketCloseFrame` and `WebSocketCloseCode`: which close payloads are accepted, what Courier
/// sends for the app's code and reason, and how a peer's code becomes a `CloseCode`.
@Suite("WebSocket close frames and codes")
struct WebSocketCloseFrameTests {
    private func payload(_ code: UInt16, _ reason: [UInt8] = []) -> Data {
        Data([UInt8(code >> 8), UInt8(code & 0xFF)] + reason)
    }

    @Test func anEmptyPayloadHasNoCode() throws {
        #expect(try WebSocketCloseFrame(payload: Data()) == WebSocketCloseFrame(code: nil))
    }

    @Test func aCodeAndAUTF8Reason() throws {
        #expect(try WebSocketCloseFrame(payload: payload(1000, Array("done ✓".utf8))) == WebSocketCloseFrame(code: 1000, reason: Data("done ✓".utf8)))
    }

    @Test func aOneBytePayloadIsRefused() {
        #expect(throws: WebSocketProtocolError.closePayloadTooShort) { try WebSocketCloseFrame(payload: Data([0x03])) }
    }

    @Test(arguments: [UInt16(1000), 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4000, 4999])
    func codesAllowedOnTheWire(code: UInt16) throws {
        #expect(try WebSocketCloseFrame(payload: payload(code)).code == code)
    }

    @Test(arguments: [UInt16(0), 1, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535])
    func codesRefusedOnTheWire(code: UInt16) {
        #expect(throws: WebSocketProtocolError.invalidCloseCode(code)) { try WebSocketCloseFrame(payload: payload(code)) }
    }

    @Test func aReasonThatIsNotUTF8IsRefused() {
        #expect(throws: WebSocketProtocolError.invalidCloseReason) { try WebSocketCloseFrame(payload: payload(1000, [0xCE, 0xBA, 0xE1, 0xBD])) }
    }

    @Test func thePayloadIsTheCodeBigEndianThenTheReason() {
        #expect(Array(WebSocketCloseFrame(code: 1001, reason: Data("bye".utf8)).payload) == [0x03, 0xE9, 0x62, 0x79, 0x65])
    }

    @Test func withoutACodeThePayloadIsEmpty() {
        #expect(WebSocketCloseFrame(code: nil, reason: Data("ignored".utf8)).payload.isEmpty)
    }

    // MARK: What Courier sends

    @Test func theAppsCodeAndReasonAreSent() {
        #expect(WebSocketCloseFrame(sending: .goingAway, reason: Data("later".utf8)) == WebSocketCloseFrame(code: 1001, reason: Data("later".utf8)))
    }

    @Test(arguments: [WebSocketCloseCode.invalid, .noStatusReceived, .abnormalClosure, .tlsHandshakeFailure])
    func aCodeThatMustNotBeSentGivesAnEmptyCloseFrame(code: WebSocketCloseCode) {
        #expect(WebSocketCloseFrame(sending: code, reason: Data("why".utf8)) == WebSocketCloseFrame(code: nil))
    }

    @Test func aLongReasonIsCutTo123BytesAtACharacterBoundary() {
        // 61 two-byte characters (122 bytes) and then a third-byte-crossing "€": the cut leaves 122.
        let reason = Data((String(repeating: "é", count: 61) + "€€").utf8)
        let sent = WebSocketCloseFrame(sending: .normalClosure, reason: reason)
        #expect(sent.reason == Data(String(repeating: "é", count: 61).utf8) && sent.payload.count <= 125)
    }

    @Test func aLongASCIIReasonKeeps123Bytes() {
        let sent = WebSocketCloseFrame(sending: .normalClosure, reason: Data(repeating: 0x61, count: 300))
        #expect(sent.reason.count == 123)
    }

    @Test func aReasonThatIsNotUTF8IsLeftOut() {
        #expect(WebSocketCloseFrame(sending: .policyViolation, reason: Data([0xFF])) == WebSocketCloseFrame(code: 1008))
    }

    // MARK: Codes

    @Test func closeCodesHaveApplesRawValues() {
        let codes: [WebSocketCloseCode] = [.invalid, .normalClosure, .goingAway, .protocolError, .unsupportedData, .noStatusReceived,
                                           .abnormalClosure, .invalidFramePayloadData, .policyViolation, .messageTooBig,
                                           .mandatoryExtensionMissing, .internalServerError, .tlsHandshakeFailure]
        #expect(codes.map(\.rawValue) == [0, 1000, 1001, 1002, 1003, 1005, 1006, 1007, 1008, 1009, 1010, 1011, 1015])
    }

    @Test func aPeersCodeMapsToItsCase() {
        #expect([UInt16(1000), 1001, 1011].map { WebSocketCloseCode(peerCode: $0) } == [.normalClosure, .goingAway, .internalServerError])
    }

    @Test func noPeerCodeIsNoStatusReceived() {
        #expect(WebSocketCloseCode(peerCode: nil) == .noStatusReceived)
    }

    @Test func aPeerCodeWithoutACaseIsUnsupportedDataAsInFoundationNetworking() {
        #expect([UInt16(1012), 3000, 4321].map { WebSocketCloseCode(peerCode: $0) } == [.unsupportedData, .unsupportedData, .unsupportedData])
    }
}
