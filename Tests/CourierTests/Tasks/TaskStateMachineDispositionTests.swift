import Foundation
import Testing
@testable import Courier

/// The response disposition: holding the body, `.allow`, `.cancel` and `.becomeDownload`, with no
/// session and no server.
@Suite("Task state machine: response disposition")
struct TaskStateMachineDispositionTests {
    static func chunk(_ text: String) -> Data { Data(text.utf8) }

    @Test func chunksArrivingWhileTheDelegateDecidesAreHeldAndReleasedInOrder() {
        var machine = TestMachine.loading()
        guard case .accept = machine.response(generation: 1, asksDelegate: true) else { Issue.record("response"); return }
        guard case .held = machine.body(Self.chunk("a")), case .held = machine.body(Self.chunk("b")) else {
            Issue.record("held"); return
        }
        check(machine.allow() == [Self.chunk("a"), Self.chunk("b")])
        guard case .pass = machine.body(Self.chunk("c")) else { Issue.record("after the answer chunks pass"); return }
        check(machine.allow() == [], "a second answer releases nothing")
    }

    @Test func aResponseNobodyIsAskedAboutHoldsNothing() {
        var machine = TestMachine.loading()
        _ = machine.response(generation: 1, asksDelegate: false)
        guard case .pass = machine.body(Self.chunk("a")) else { Issue.record("pass"); return }
    }

    @Test func theBodyHeldWhenTheLoadEndsIsReleasedBeforeTheCompletion() {
        var machine = TestMachine.loading()
        _ = machine.response(generation: 1, asksDelegate: true)
        _ = machine.body(Self.chunk("a"))
        _ = machine.finish(error: nil, generation: 1)
        check(machine.allow() == [Self.chunk("a")])
    }

    @Test func cancelDuringTheDispositionDropsTheHeldBody() {
        var machine = TestMachine.loading()
        _ = machine.response(generation: 1, asksDelegate: true)
        _ = machine.body(Self.chunk("a"))
        guard case .cancel(stop: let load?) = machine.cancel(), load.name == "first" else { Issue.record("cancel"); return }
        check(machine.allow() == [])
        check(machine.becomeDownload("successor") == nil, "a cancelled task hands nothing over")
        #expect(machine.publicState == .canceling)
    }

    @Test func becomeDownloadHandsTheLoadAndTheHeldChunksOver() {
        var machine = TestMachine.loading()
        _ = machine.response(generation: 1, asksDelegate: true)
        _ = machine.body(Self.chunk("a"))
        _ = machine.canAcceptMoreData(generation: 1, pendingBytes: TestMachine.highWaterBytes)
        guard let handover = machine.becomeDownload("successor") else { Issue.record("no hand-over"); return }
        #expect(handover.load == TestLoad(name: "first"))
        #expect(handover.generation == 1)
        #expect(handover.held.chunks == [Self.chunk("a")])
        #expect(handover.producerWaiting)
        #expect(handover.ended == nil)
        #expect(machine.publicState == .completed)
        check(machine.completionStarted(), "the data task's final step only tells the session")
        // Every later report of the load goes to the successor: one route for all of them.
        guard case .forward("successor") = machine.route(1) else { Issue.record("route"); return }
        guard case .forward("successor") = machine.finish(error: nil, generation: 1) else { Issue.record("finish"); return }
        guard case .forward("successor") = machine.canAcceptMoreData(generation: 1, pendingBytes: 0) else {
            Issue.record("back-pressure"); return
        }
        guard case .forward("successor") = machine.response(generation: 1, asksDelegate: false) else { Issue.record("response"); return }
        guard case .stale = machine.route(2) else { Issue.record("another generation"); return }
        guard case .none = machine.cancel() else { Issue.record("a handed-over task cannot be cancelled"); return }
    }

    @Test func theSuccessorWritesHeldChunksBeforeChunksArrivingMeanwhile() {
        var data = TestMachine.loading()
        _ = data.response(generation: 1, asksDelegate: true)
        _ = data.body(Self.chunk("a"))
        guard let handover = data.becomeDownload("successor") else { Issue.record("no hand-over"); return }
        var download = TestMachine()
        check(download.adopt(handover))
        check(!download.adopt(handover), "adopted once")
        #expect(download.publicState == .running)
        check(download.isCurrent(1))
        // A chunk forwarded before the held ones are written waits behind them.
        guard case .held = download.body(Self.chunk("b")) else { Issue.record("b must wait"); return }
        guard case .chunks(let first) = download.takeHeldBody() else { Issue.record("first batch"); return }
        #expect(first == [Self.chunk("a"), Self.chunk("b")])
        guard case .held = download.body(Self.chunk("c")) else { Issue.record("c arrives while a and b are written"); return }
        guard case .chunks(let second) = download.takeHeldBody() else { Issue.record("second batch"); return }
        #expect(second == [Self.chunk("c")])
        guard case .done(wake: nil) = download.takeHeldBody() else { Issue.record("done"); return }
        guard case .pass = download.body(Self.chunk("d")) else { Issue.record("d is written directly"); return }
    }

    @Test func aResponseReachingTheSuccessorWhileItWritesKeepsTheHeldChunks() {
        var data = TestMachine.loading()
        _ = data.response(generation: 1, asksDelegate: true)
        _ = data.body(Self.chunk("a"))
        guard let handover = data.becomeDownload("successor") else { Issue.record("no hand-over"); return }
        var download = TestMachine()
        _ = download.adopt(handover)
        guard case .accept = download.response(generation: 1, asksDelegate: false) else { Issue.record("response"); return }
        guard case .chunks(let held) = download.takeHeldBody() else { Issue.record("the held chunk is kept"); return }
        #expect(held == [Self.chunk("a")])
    }

    @Test func theSuccessorWakesAHandlerPausedByTheHeldBodyOnceItIsWritten() {
        var data = TestMachine.loading()
        _ = data.response(generation: 1, asksDelegate: true)
        _ = data.body(Data(count: TestMachine.highWaterBytes + 1))
        check(data.canAcceptMoreData(generation: 1, pendingBytes: 0).isRefusal)
        guard let handover = data.becomeDownload("successor") else { Issue.record("no hand-over"); return }
        var download = TestMachine()
        _ = download.adopt(handover)
        check(download.canAcceptMoreData(generation: 1, pendingBytes: 0).isRefusal, "still over the mark")
        guard case .chunks = download.takeHeldBody() else { Issue.record("chunks"); return }
        guard case .done(wake: let load?) = download.takeHeldBody(), load.name == "first" else { Issue.record("wake"); return }
    }

    @Test func becomeDownloadAfterTheLoadEndedHandsOverHowItEnded() {
        var data = TestMachine.loading()
        _ = data.response(generation: 1, asksDelegate: true)
        _ = data.body(Self.chunk("a"))
        _ = data.finish(error: nil, generation: 1)
        guard let handover = data.becomeDownload("successor") else { Issue.record("no hand-over"); return }
        #expect(handover.load == nil)
        #expect(handover.held.chunks == [Self.chunk("a")])
        guard case .some(nil) = handover.ended else { Issue.record("ended with success"); return }
        var download = TestMachine()
        _ = download.adopt(handover)
        #expect(!download.isLoading)
        guard case .finish(stop: nil) = download.finish(error: nil, generation: nil) else { Issue.record("the successor ends"); return }
        guard case .chunks(let held) = download.takeHeldBody() else { Issue.record("the held chunks are still written"); return }
        #expect(held == [Self.chunk("a")])
        guard case .done(wake: nil) = download.takeHeldBody() else { Issue.record("done"); return }
    }

    @Test func becomeDownloadWithoutAPendingDispositionHandsNothingOver() {
        var machine = TestMachine.loading()
        _ = machine.response(generation: 1, asksDelegate: false)
        check(machine.becomeDownload("successor") == nil)
        #expect(machine.publicState == .running)
    }
}
