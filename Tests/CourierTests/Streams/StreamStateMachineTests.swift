import Foundation
import Testing
@testable import Courier

/// The stream task's state machine alone, without sockets: reads and their minimum, maximum and
/// end of stream; write order; closes; TLS and capture as barriers; timeouts, failure, cancel.
@Suite("Stream state machine")
struct StreamStateMachineTests {
    /// A machine that is connected.
    private func open() -> StreamStateMachine {
        var machine = StreamStateMachine(url: URL(string: "tcp://example.test:7"))
        _ = machine.resume()
        _ = machine.connected()
        _ = machine.takeTransportWork()
        return machine
    }

    private func data(_ text: String) -> Data { Data(text.utf8) }

    @Test func resumeAsksTheTransportToConnectOnce() {
        var machine = StreamStateMachine(url: nil)
        #expect(machine.resume() == [.service])
        #expect(machine.resume() == [])
        #expect(machine.takeTransportWork() == [.connect])
    }

    @Test func readsQueuedBeforeTheConnectionWaitForIt() {
        var machine = StreamStateMachine(url: nil)
        _ = machine.resume()
        #expect(machine.read(id: 1, minimum: 1, maximum: 10) == [])
        #expect(machine.received(data("late")) == [])
        #expect(machine.connected() == [.service])
        #expect(machine.received(data("hello")) == [.completeRead(id: 1, data: data("hello"), atEOF: false, error: nil)])
    }

    @Test func aReadWaitsForItsMinimumAndTakesAtMostItsMaximum() {
        var machine = open()
        #expect(machine.read(id: 1, minimum: 4, maximum: 6) == [.service])
        #expect(machine.received(data("ab")) == [])
        #expect(machine.received(data("cdefgh")) == [.completeRead(id: 1, data: data("abcdef"), atEOF: false, error: nil)])
        #expect(machine.inbound == data("gh"))
    }

    @Test func readsCompleteInTheOrderTheyWereQueued() {
        var machine = open()
        _ = machine.read(id: 1, minimum: 2, maximum: 2)
        _ = machine.read(id: 2, minimum: 3, maximum: 3)
        #expect(machine.received(data("abcde")) == [
            .completeRead(id: 1, data: data("ab"), atEOF: false, error: nil),
            .completeRead(id: 2, data: data("cde"), atEOF: false, error: nil),
        ])
    }

    @Test func endOfStreamCompletesAShortReadAndTellsTheDelegateOnce() {
        var machine = open()
        _ = machine.read(id: 1, minimum: 10, maximum: 10)
        _ = machine.received(data("abc"))
        #expect(machine.receivedEOF() == [.readClosed, .completeRead(id: 1, data: data("abc"), atEOF: true, error: nil)])
        #expect(machine.read(id: 2, minimum: 1, maximum: 1) == [.completeRead(id: 2, data: Data(), atEOF: true, error: nil)])
        #expect(machine.receivedEOF() == [])
    }

    @Test func writesGoOutInOrderAndCompleteWhenHandedOver() {
        var machine = open()
        _ = machine.write(id: 1, data: data("hello"))
        _ = machine.write(id: 2, data: data("world"))
        #expect(machine.outbound == data("hello"))
        #expect(machine.wrote(3) == [])
        #expect(machine.outbound == data("lo"))
        #expect(machine.wrote(2) == [.completeWrite(id: 1, error: nil)])
        #expect(machine.outbound == data("world"))
        #expect(machine.wrote(5) == [.completeWrite(id: 2, error: nil)])
        #expect(machine.outbound == nil)
    }

    @Test func closeWriteWaitsForEarlierWritesButNotForReads() {
        var machine = open()
        _ = machine.read(id: 1, minimum: 1, maximum: 1)
        _ = machine.write(id: 2, data: data("bye"))
        #expect(machine.closeWrite() == [])
        guard case .completeWrite(3, let refusal?)? = machine.write(id: 3, data: data("late")).first else {
            Issue.record("a write after closeWrite must be refused")
            return
        }
        #expect(refusal.code == .networkConnectionLost)
        #expect(machine.wrote(3) == [.completeWrite(id: 2, error: nil), .service, .writeClosed])
        #expect(machine.takeTransportWork() == [.shutdownWrite])
        #expect(machine.queued(.read(id: 1, minimum: 1, maximum: 1)))
    }

    @Test func bothSidesClosedEndsTheStreamWithoutError() {
        var machine = open()
        _ = machine.closeWrite()
        _ = machine.takeTransportWork()
        let actions = machine.receivedEOF()
        #expect(actions.first == .readClosed)
        #expect(actions.last == .finish(nil))
        #expect(machine.takeTransportWork() == [.close])
        #expect(machine.read(id: 1, minimum: 1, maximum: 1) == [.completeRead(id: 1, data: Data(), atEOF: true, error: nil)])
    }

    @Test func closeReadRefusesLaterReads() {
        var machine = open()
        #expect(machine.closeRead() == [.service, .readClosed])
        let refused = machine.read(id: 1, minimum: 1, maximum: 1)
        guard case .completeRead(1, nil, false, let error?)? = refused.first else {
            Issue.record("expected a refusal, got \(refused)")
            return
        }
        #expect(error.code == .networkConnectionLost)
    }

    @Test func startTLSWaitsForEverythingBeforeItAndHoldsWhatComesAfter() {
        var machine = open()
        _ = machine.write(id: 1, data: data("STARTTLS\r\n"))
        _ = machine.read(id: 2, minimum: 1, maximum: 100)
        _ = machine.startTLS()
        _ = machine.write(id: 3, data: data("secret"))
        #expect(machine.outbound == data("STARTTLS\r\n"))
        _ = machine.wrote(10)
        #expect(machine.takeTransportWork().isEmpty)
        // The answer, and plain text read ahead of the upgrade, which is dropped.
        let actions = machine.received(data("220 go\r\nINJECTED"))
        #expect(actions.contains(.completeRead(id: 2, data: data("220 go\r\nINJECTED"), atEOF: false, error: nil)))
        #expect(machine.tls == .handshaking)
        #expect(machine.takeTransportWork() == [.beginTLS])
        #expect(machine.outbound == nil)
        #expect(!machine.wantsToRead)
        #expect(machine.tlsEstablished() == [.service])
        #expect(machine.outbound == data("secret"))
    }

    @Test func plainTextReadAheadOfTheUpgradeIsDropped() {
        var machine = open()
        _ = machine.read(id: 1, minimum: 2, maximum: 2)
        _ = machine.startTLS()
        _ = machine.received(data("okINJECTED"))
        #expect(machine.tls == .handshaking)
        #expect(machine.inbound.isEmpty)
    }

    @Test func captureHandsOverTheBytesReadAheadAndEndsTheStream() {
        var machine = open()
        _ = machine.received(data("ahead"))
        #expect(machine.capture() == [.service])
        #expect(machine.takeTransportWork() == [.capture(buffered: data("ahead"))])
        #expect(machine.isEnded)
        #expect(machine.write(id: 1, data: data("x")).count == 1)
    }

    @Test func aTimedOutReadFailsAndTheNextOneGoesOn() {
        var machine = open()
        _ = machine.read(id: 1, minimum: 5, maximum: 5)
        _ = machine.read(id: 2, minimum: 1, maximum: 5)
        let actions = machine.timedOut(id: 1)
        guard case .completeRead(1, nil, false, let error?)? = actions.first else {
            Issue.record("expected a timeout, got \(actions)")
            return
        }
        #expect(error.code == .timedOut)
        #expect(machine.received(data("x")) == [.completeRead(id: 2, data: data("x"), atEOF: false, error: nil)])
        #expect(machine.timedOut(id: 2) == [])
    }

    @Test func cancelFailsEverythingQueuedWithCancelled() {
        var machine = open()
        _ = machine.read(id: 1, minimum: 1, maximum: 1)
        _ = machine.write(id: 2, data: data("x"))
        let actions = machine.cancel()
        let codes = actions.compactMap { action -> URLError.Code? in
            switch action {
            case .completeRead(_, _, _, let error?), .completeWrite(_, let error?): error.code
            default: nil
            }
        }
        #expect(codes == [.cancelled, .cancelled])
        #expect(!actions.contains { if case .finish = $0 { true } else { false } })
        #expect(machine.takeTransportWork() == [.close])
    }

    @Test func aFailureFailsEverythingAndEndsTheTaskWithIt() {
        var machine = open()
        _ = machine.read(id: 1, minimum: 1, maximum: 1)
        let lost = URLError(.networkConnectionLost)
        #expect(machine.failed(lost) == [.completeRead(id: 1, data: nil, atEOF: false, error: lost), .service, .finish(lost)])
        #expect(machine.failed(lost) == [])
    }

    @Test func connectingTooLongTimesOut() {
        var machine = StreamStateMachine(url: nil)
        _ = machine.resume()
        guard case .finish(let error?)? = machine.connectTimedOut().last else {
            Issue.record("expected the task to end")
            return
        }
        #expect(error.code == .timedOut)
    }

    @Test func readAheadStopsAtItsLimit() {
        var machine = open()
        _ = machine.received(Data(count: StreamStateMachine.readAheadLimit))
        #expect(!machine.wantsToRead)
    }
}
