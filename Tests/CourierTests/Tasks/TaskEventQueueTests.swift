import Foundation
import Testing
@testable import Courier

/// The task's event queue on its own: order, awaiting steps, pausing, the held body, cancel.
@Suite("Task event queue")
struct TaskEventQueueTests {
    final class Recorder: @unchecked Sendable {
        var names: [String] = []
    }

    static func step(_ name: String, _ recorder: Recorder, bytes: Int = 0) -> TaskEventQueue.Step {
        .immediate({ recorder.names.append(name) }, bytes: bytes)
    }

    @Test func stepsRunInOrderThenTheFinalOnce() {
        var queue = TaskEventQueue()
        let recorder = Recorder()
        check(queue.append(Self.step("a", recorder), paused: false), "the first step schedules a drain")
        check(!queue.append(Self.step("b", recorder), paused: false), "one drain at a time")
        _ = queue.close(withFinal: { recorder.names.append("final") }, paused: false)
        while true {
            switch queue.next(paused: false) {
            case .immediate(let run, _), .final(let run): run(); continue
            case .awaiting: Issue.record("no awaiting step was queued")
            case .none: break
            }
            break
        }
        #expect(recorder.names == ["a", "b", "final"])
        guard case .none = queue.next(paused: false) else { Issue.record("nothing after the final"); return }
    }

    /// Stands for a body chunk a step captured.
    final class Payload: Sendable {}

    @Test func aTakenStepReleasesWhatItCapturedWhileTheDrainGoesOn() {
        // A drain that never finds the queue empty (the producer keeps up) must not keep the chunks
        // of the steps it already ran.
        var queue = TaskEventQueue()
        weak var released: Payload?
        do {
            let payload = Payload()
            released = payload
            _ = queue.append(.immediate({ _ = payload }, bytes: 1), paused: false)
        }
        _ = queue.append(.immediate({}, bytes: 0), paused: false)
        do {
            guard case .immediate(let run, _) = queue.next(paused: false) else { Issue.record("a step"); return }
            run()
        }
        #expect(released == nil, "the step run first still holds its chunk")
    }

    @Test func anAwaitingStepHoldsEverythingBehindItUntilAnswered() {
        var queue = TaskEventQueue()
        let recorder = Recorder()
        _ = queue.append(.awaiting({ _ in recorder.names.append("ask") }), paused: false)
        _ = queue.append(Self.step("after", recorder), paused: false)
        guard case .awaiting(let ask, let ticket) = queue.next(paused: false) else { Issue.record("awaiting first"); return }
        ask { }
        guard case .none = queue.next(paused: false) else { Issue.record("held until answered"); return }
        check(!queue.resumed(ticket: ticket + 1, paused: false), "another ticket does not release it")
        check(queue.resumed(ticket: ticket, paused: false), "the answer schedules a drain")
        guard case .immediate(let run, _) = queue.next(paused: false) else { Issue.record("then the next step"); return }
        run()
        #expect(recorder.names == ["ask", "after"])
    }

    @Test func aPausedQueueRunsNothingAndSchedulesWhenKicked() {
        var queue = TaskEventQueue()
        let recorder = Recorder()
        check(!queue.append(Self.step("a", recorder), paused: true))
        guard case .none = queue.next(paused: true) else { Issue.record("paused"); return }
        check(queue.kick(paused: false))
        guard case .immediate = queue.next(paused: false) else { Issue.record("released"); return }
    }

    @Test func theHeldBodyGoesAheadOfStepsQueuedMeanwhile() {
        var queue = TaskEventQueue()
        let recorder = Recorder()
        _ = queue.append(.awaiting({ _ in }), paused: false)
        guard case .awaiting(_, let ticket) = queue.next(paused: false) else { Issue.record("awaiting"); return }
        _ = queue.append(Self.step("new", recorder, bytes: 3), paused: false)
        _ = queue.insertNext([(bytes: 1, run: { recorder.names.append("held1") }),
                              (bytes: 2, run: { recorder.names.append("held2") })], paused: false)
        #expect(queue.pendingBytes == 6)
        _ = queue.resumed(ticket: ticket, paused: false)
        while case .immediate(let run, _) = queue.next(paused: false) { run() }
        #expect(recorder.names == ["held1", "held2", "new"])
        #expect(queue.pendingBytes == 0)
    }

    @Test func replacingEverythingDropsStepsAndReleasesTheAwaitedOne() {
        var queue = TaskEventQueue()
        let recorder = Recorder()
        _ = queue.append(.awaiting({ _ in }), paused: false)
        _ = queue.append(Self.step("dropped", recorder, bytes: 5), paused: false)
        guard case .awaiting(_, let ticket) = queue.next(paused: false) else { Issue.record("awaiting"); return }
        _ = queue.replaceAll(withFinal: { recorder.names.append("cancelled") }, paused: false)
        #expect(queue.pendingBytes == 0)
        check(!queue.resumed(ticket: ticket, paused: false), "a late answer to a dropped step changes nothing")
        guard case .final(let run) = queue.next(paused: false) else { Issue.record("the cancel comes next"); return }
        run()
        #expect(recorder.names == ["cancelled"])
    }
}
