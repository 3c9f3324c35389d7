import Foundation
import Testing
@testable import Courier

/// `WebSocketConnectionStateMachine`: messages, pings and pongs, both close handshakes, the end of
/// the transport, and every protocol error with the close code it sends.
@Suite("WebSocket connection state machine")
struct WebSocketConnectionStateMachineTests {
    private typealias Support = WebSocketTestSupport
    private typealias Machine = WebSocketConnectionStateMachine

    private func receive(_ machine: inout Machine, _ bytes: [UInt8]) throws -> [SeenAction] {
        try SeenAction.of(machine.receivedBytes(bytes))
    }

    /// The payload of the ping a `sendPing()` wrote.
    private func sentPing(_ machine: inout Machine) throws -> [UInt8] {
        let frame = try Support.clientFrame(try machine.sendPing().get())
        guard frame.opcode == .ping else { throw Support.Unexpected(detail: "wrote \(frame.opcode)") }
        return Array(frame.payload)
    }

    // MARK: Messages

    @Test func messagesAreDeliveredInOrder() throws {
        var machine = Machine()
        let bytes = Support.serverFrame(.text, Array("one".utf8)) + Support.serverFrame(.binary, [2]) + Support.serverFrame(.text, Array("three".utf8))
        #expect(try receive(&machine, bytes) == [.text("one"), .binary(Data([2])), .text("three")])
    }

    @Test func aMessageSplitAcrossReadsIsDeliveredOnceComplete() throws {
        var machine = Machine()
        let bytes = Support.serverFrame(.text, fin: false, Array("frag".utf8)) + Support.serverFrame(.continuation, Array("ment".utf8))
        let early = try receive(&machine, Array(bytes.prefix(9)))
        let rest = try receive(&machine, Array(bytes.dropFirst(9)))
        #expect(early.isEmpty && rest == [.text("fragment")])
    }

    @Test func sentMessagesAreMaskedFramesOfTheirKind() throws {
        var machine = Machine()
        let text = try Support.clientFrames(try machine.send(.string("héllo")).get())
        let data = try Support.clientFrames(try machine.send(.data(Data([0, 1, 2]))).get())
        #expect(text + data == [WebSocketFrame(opcode: .text, payload: Data("héllo".utf8)),
                                WebSocketFrame(opcode: .binary, payload: Data([0, 1, 2]))])
    }

    @Test func theMaximumMessageSizeCanBeChanged() throws {
        var machine = Machine()
        machine.maximumMessageSize = 3
        let actions = try receive(&machine, Support.serverFrame(.binary, [1, 2, 3, 4]))
        #expect(actions == [SeenAction.writeClose(1009, WebSocketProtocolError.messageTooBig.reason), .closeTransport,
                            .finish(.failed(.protocolViolation(.messageTooBig)))])
    }

    @Test func aPingBetweenFragmentsIsNotHeldToWhatTheMessageHasLeft() throws {
        var machine = Machine(maximumMessageSize: 4)
        let bytes = Support.serverFrame(.binary, fin: false, [1, 2, 3, 4]) + Support.serverFrame(.ping, Array(repeating: 5, count: 100))
            + Support.serverFrame(.continuation, [])
        #expect(try receive(&machine, bytes) == [.write(WebSocketFrame(opcode: .pong, payload: Data(repeating: 5, count: 100))),
                                                 .binary(Data([1, 2, 3, 4]))])
    }

    // MARK: Pings

    @Test func aPingIsAnsweredWithAPongCarryingItsPayload() throws {
        var machine = Machine()
        #expect(try receive(&machine, Support.serverFrame(.ping, [9, 8, 7])) == [.write(WebSocketFrame(opcode: .pong, payload: Data([9, 8, 7])))])
    }

    @Test func aPingBetweenFragmentsIsAnsweredAndTheMessageStillCompletes() throws {
        var machine = Machine()
        let bytes = Support.serverFrame(.text, fin: false, Array("a".utf8)) + Support.serverFrame(.ping, [1])
            + Support.serverFrame(.continuation, Array("b".utf8))
        #expect(try receive(&machine, bytes) == [.write(WebSocketFrame(opcode: .pong, payload: Data([1]))), .text("ab")])
    }

    @Test func pongsResolvePingsInOrder() throws {
        var machine = Machine()
        let first = try sentPing(&machine)
        let second = try sentPing(&machine)
        let resolved = try receive(&machine, Support.serverFrame(.pong, first)) + receive(&machine, Support.serverFrame(.pong, second))
        #expect(resolved == [.resolvePings(1), .resolvePings(1)] && machine.outstandingPingCount == 0)
    }

    /// A peer may answer only the latest of several pings (RFC 6455 §5.5.3): that pong resolves
    /// the older ones too.
    @Test func aPongForALaterPingResolvesTheEarlierOnes() throws {
        var machine = Machine()
        _ = try sentPing(&machine)
        let second = try sentPing(&machine)
        _ = try sentPing(&machine)
        #expect(try receive(&machine, Support.serverFrame(.pong, second)) == [.resolvePings(2)] && machine.outstandingPingCount == 1)
    }

    @Test func unsolicitedPongsAreIgnored() throws {
        var machine = Machine()
        let ping = try sentPing(&machine)
        let bytes = Support.serverFrame(.pong) + Support.serverFrame(.pong, [1, 2, 3, 4, 5, 6, 7, 8]) + Support.serverFrame(.pong, Array("hello".utf8))
        let ignored = try receive(&machine, bytes)
        let answered = try receive(&machine, Support.serverFrame(.pong, ping)) + receive(&machine, Support.serverFrame(.pong, ping))
        #expect(ignored.isEmpty && answered == [.resolvePings(1)])
    }

    @Test func eachPingHasItsOwnPayload() throws {
        var machine = Machine()
        let payloads = try (0..<5).map { _ in try sentPing(&machine) }
        #expect(Set(payloads).count == 5 && payloads.allSatisfy { $0.count == 8 })
    }

    // MARK: Closing: the peer first

    @Test func aPeersCloseIsEchoedWithItsCodeAndEndsTheConnection() throws {
        var machine = Machine()
        let actions = try receive(&machine, Support.serverClose(1001, "restarting"))
        let end = WebSocketConnectionEnd.closed(WebSocketCloseFrame(code: 1001, reason: Data("restarting".utf8)))
        #expect(actions == [SeenAction.writeClose(1001), .closeTransport, .finish(end)] && machine.state == .closed(end))
    }

    @Test func aPeersEmptyCloseIsEchoedEmptyAndIsNoStatusReceived() throws {
        var machine = Machine()
        let actions = try receive(&machine, Support.serverFrame(.close))
        let end = WebSocketConnectionEnd.closed(WebSocketCloseFrame(code: nil))
        #expect(actions == [SeenAction.writeClose(nil), .closeTransport, .finish(end)] && end.closeCode == .noStatusReceived)
    }

    @Test func theEndCarriesThePeersCodeAndReason() {
        let end = WebSocketConnectionEnd.closed(WebSocketCloseFrame(code: 1000, reason: Data("bye".utf8)))
        #expect(end.closeCode == .normalClosure && end.closeReason == Data("bye".utf8))
    }

    @Test func framesAfterThePeersCloseAreIgnored() throws {
        var machine = Machine()
        let bytes = Support.serverClose(1000) + Support.serverFrame(.text, Array("late".utf8)) + Support.serverFrame(.ping)
        let actions = try receive(&machine, bytes)
        let later = try receive(&machine, Support.serverFrame(.text, Array("later".utf8)))
        #expect(actions.count == 3 && later.isEmpty)
    }

    @Test func nothingCanBeSentAfterThePeersClose() throws {
        var machine = Machine()
        _ = machine.receivedBytes(Support.serverClose(1000))
        #expect(machine.send(.string("x")) == .failure(.notConnected) && machine.sendPing() == .failure(.notConnected)
                && machine.close(code: .normalClosure, reason: nil).isEmpty)
    }

    // MARK: Closing: Courier first

    @Test func closingSendsTheAppsCodeAndReasonAndWaits() throws {
        var machine = Machine()
        let actions = try SeenAction.of(machine.close(code: .goingAway, reason: Data("done".utf8)))
        #expect(actions == [SeenAction.writeClose(1001, "done")]
                && machine.state == .closing(sent: WebSocketCloseFrame(code: 1001, reason: Data("done".utf8))))
    }

    @Test func cancellingWithInvalidSendsAnEmptyCloseFrame() throws {
        var machine = Machine()
        #expect(try SeenAction.of(machine.close(code: .invalid, reason: Data("x".utf8))) == [SeenAction.writeClose(nil)])
    }

    @Test func thePeersAnswerCompletesTheHandshakeWithoutAnotherClose() throws {
        var machine = Machine()
        _ = machine.close(code: .normalClosure, reason: nil)
        let actions = try receive(&machine, Support.serverClose(1000))
        let end = WebSocketConnectionEnd.closed(WebSocketCloseFrame(code: 1000))
        #expect(actions == [.closeTransport, .finish(end)])
    }

    @Test func whileClosingMessagesAndPongsStillArriveButNothingIsSent() throws {
        var machine = Machine()
        let ping = try sentPing(&machine)
        _ = machine.close(code: .normalClosure, reason: nil)
        let bytes = Support.serverFrame(.text, Array("last".utf8)) + Support.serverFrame(.ping, [1]) + Support.serverFrame(.pong, ping)
        let actions = try receive(&machine, bytes)
        #expect(actions == [.text("last"), .resolvePings(1)] && machine.send(.data(Data())) == .failure(.notConnected)
                && machine.sendPing() == .failure(.notConnected))
    }

    @Test func closingTwiceSendsOneCloseFrame() {
        var machine = Machine()
        _ = machine.close(code: .normalClosure, reason: nil)
        #expect(machine.close(code: .goingAway, reason: nil).isEmpty)
    }

    @Test func aPeerThatDoesNotAnswerTimesOut() throws {
        var machine = Machine()
        _ = machine.close(code: .normalClosure, reason: nil)
        let actions = try SeenAction.of(machine.closeHandshakeTimedOut())
        #expect(actions == [.closeTransport, .finish(.failed(.closeHandshakeTimedOut))])
    }

    @Test func aTimeoutWhileOpenDoesNothing() {
        var machine = Machine()
        #expect(machine.closeHandshakeTimedOut().isEmpty && machine.state == .open)
    }

    // MARK: The transport

    @Test func theTransportClosingWhileOpenIsAConnectionLost() throws {
        var machine = Machine()
        _ = try sentPing(&machine)
        let actions = try SeenAction.of(machine.transportClosed())
        let end = WebSocketConnectionEnd.failed(.connectionLost)
        #expect(actions == [.finish(end)] && end.closeCode == .abnormalClosure && machine.outstandingPingCount == 0)
    }

    @Test func theTransportClosingWhileClosingIsAConnectionLost() throws {
        var machine = Machine()
        _ = machine.close(code: .normalClosure, reason: nil)
        #expect(try SeenAction.of(machine.transportClosed()) == [.finish(.failed(.connectionLost))])
    }

    @Test func theTransportClosingAfterTheHandshakeReportsNothingMore() {
        var machine = Machine()
        _ = machine.receivedBytes(Support.serverClose(1000))
        #expect(machine.transportClosed().isEmpty)
    }

    // MARK: Protocol errors

    /// Each malformed input, the error it is, and the close code Courier sends for it.
    private static let violations: [(bytes: [UInt8], error: WebSocketProtocolError, code: UInt16)] = [
        ([0xC1, 0x00], .reservedBitsSet, 1002),
        ([0x83, 0x00], .unknownOpcode(3), 1002),
        ([0x8B, 0x00], .unknownOpcode(0xB), 1002),
        (WebSocketTestSupport.rawFrame(firstByte: 0x81, payload: [0x61], mask: WebSocketMaskingKey(1, 2, 3, 4)), .maskedFrameFromServer, 1002),
        ([0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 1], .payloadLengthOutOfRange, 1002),
        ([0x09, 0x00], .fragmentedControlFrame, 1002),
        ([0x89, 0x7E, 0x00, 0x7E], .controlFrameTooLong(126), 1002),
        ([0x80, 0x01, 0x61], .continuationWithoutStart, 1002),
        ([0x01, 0x01, 0x61, 0x81, 0x01, 0x62], .newMessageDuringFragmentedMessage, 1002),
        ([0x81, 0x02, 0xC3, 0x28], .invalidUTF8, 1007),
        ([0x01, 0x01, 0xE2, 0x80, 0x01, 0x41], .invalidUTF8, 1007),
        ([0x82, 0x7F, 0, 0, 0, 0, 0, 0x10, 0, 1], .messageTooBig, 1009),
        ([0x02, 0x7E, 0x80, 0x00] + [UInt8](repeating: 0, count: 0x8000) + [0x80, 0x7F, 0, 0, 0, 0, 0, 0x0F, 0x80, 0x01], .messageTooBig, 1009),
        ([0x88, 0x01, 0x03], .closePayloadTooShort, 1002),
        ([0x88, 0x02, 0x03, 0xED], .invalidCloseCode(1005), 1002),
        ([0x88, 0x02, 0x03, 0xEE], .invalidCloseCode(1006), 1002),
        ([0x88, 0x02, 0x00, 0x00], .invalidCloseCode(0), 1002),
        ([0x88, 0x02, 0x13, 0x88], .invalidCloseCode(5000), 1002),
        ([0x88, 0x03, 0x03, 0xE8, 0xFF], .invalidCloseReason, 1007),
    ]

    @Test(arguments: 0..<violations.count)
    func aProtocolErrorSendsItsCloseCodeAndFails(index: Int) throws {
        let violation = Self.violations[index]
        var machine = Machine()
        let actions = try receive(&machine, violation.bytes)
        #expect(actions == [SeenAction.writeClose(violation.code, violation.error.reason), .closeTransport,
                            .finish(.failed(.protocolViolation(violation.error)))])
    }

    @Test func messagesBeforeAProtocolErrorAreStillDelivered() throws {
        var machine = Machine()
        let actions = try receive(&machine, Support.serverFrame(.text, Array("ok".utf8)) + [0xC1, 0x00])
        #expect(actions.first == .text("ok") && actions.count == 4)
    }

    @Test func aProtocolErrorWhileClosingSendsNoSecondClose() throws {
        var machine = Machine()
        _ = machine.close(code: .normalClosure, reason: nil)
        #expect(try receive(&machine, [0xC1]) == [.closeTransport, .finish(.failed(.protocolViolation(.reservedBitsSet)))])
    }

    @Test func bytesAfterAProtocolErrorAreIgnored() throws {
        var machine = Machine()
        _ = machine.receivedBytes([0xC1])
        #expect(try receive(&machine, Support.serverFrame(.text, Array("x".utf8))).isEmpty && machine.transportClosed().isEmpty)
    }

    @Test func closeCodeOfAFailedConnectionIsAbnormalClosure() {
        #expect(WebSocketConnectionEnd.failed(.protocolViolation(.invalidUTF8)).closeCode == .abnormalClosure)
    }
}

/// `WebSocketConnectionError.urlError(url:)`: the URL error codes FoundationNetworking reports.
@Suite("WebSocket connection errors")
struct WebSocketConnectionErrorTests {
    private let url = URL(string: "ws://127.0.0.1:9/socket")!

    @Test(arguments: [
        (WebSocketConnectionError.protocolViolation(.reservedBitsSet), URLError.Code.badServerResponse),
        (.protocolViolation(.invalidUTF8), .badServerResponse),
        (.protocolViolation(.invalidCloseCode(1005)), .badServerResponse),
        (.protocolViolation(.messageTooBig), .dataLengthExceedsMaximum),
        (.connectionLost, .networkConnectionLost),
        (.notConnected, .networkConnectionLost),
        (.closeHandshakeTimedOut, .timedOut),
    ])
    func eachErrorsURLErrorCode(error: WebSocketConnectionError, code: URLError.Code) {
        let urlError = error.urlError(url: url)
        #expect(urlError.code == code && urlError.failingURL == url)
    }

    @Test func aViolationIsTheUnderlyingErrorAndNamedInTheDescription() {
        let urlError = WebSocketConnectionError.protocolViolation(.unknownOpcode(5)).urlError(url: url)
        #expect(urlError.userInfo[NSUnderlyingErrorKey] as? WebSocketProtocolError == .unknownOpcode(5)
                && urlError.localizedDescription.contains("reserved opcode 5"))
    }
}
