import Foundation
import Testing
@testable import Courier

/// Back-pressure, redirects and reports from old loads, with no session and no server.
@Suite("Task state machine: back-pressure and redirects")
struct TaskStateMachineFlowTests {
    static let high = TestMachine.highWaterBytes
    static let low = TestMachine.lowWaterBytes

    @Test func aHandlerOverTheHighWaterMarkWaitsAndIsWokenOnceBelowTheLowOne() {
        var machine = TestMachine.loading()
        check(machine.canAcceptMoreData(generation: 1, pendingBytes: Self.high).isAcceptance)
        check(machine.canAcceptMoreData(generation: 1, pendingBytes: Self.high + 1).isRefusal)
        check(machine.drained(pendingBytes: Self.low) == nil, "not below the low-water mark yet")
        check(machine.drained(pendingBytes: Self.low - 1) == TestLoad(name: "first"))
        check(machine.drained(pendingBytes: 0) == nil, "woken once")
    }

    @Test func aWakeUpLandingBetweenTheRefusalAndThePauseIsStillSent() {
        // The handler hears "no more" and, before it has paused, the pipeline drains: the machine
        // recorded the wait with the refusal, so the wake-up is sent (the handler's flow control
        // remembers a wake-up that arrives before its pause).
        var machine = TestMachine.loading()
        check(machine.canAcceptMoreData(generation: 1, pendingBytes: Self.high + 1).isRefusal)
        check(machine.drained(pendingBytes: 0) == TestLoad(name: "first"))
        check(machine.canAcceptMoreData(generation: 1, pendingBytes: 0).isAcceptance)
        check(machine.drained(pendingBytes: 0) == nil, "a producing handler is not woken")
    }

    @Test func aSuspendedTaskRefusesAndIsWokenByResumeNotByDraining() {
        var machine = TestMachine.loading()
        _ = machine.suspend()
        check(machine.canAcceptMoreData(generation: 1, pendingBytes: 0).isRefusal)
        check(machine.drained(pendingBytes: 0) == nil)
        guard case .resumeDelivery(wake: let load?) = machine.resume(), load.name == "first" else {
            Issue.record("resume must wake the waiting handler"); return
        }
        _ = machine.suspend()
        guard case .resumeDelivery(wake: nil) = machine.resume() else {
            Issue.record("a handler that did not wait is not woken"); return
        }
    }

    @Test func heldBodyCountsAgainstTheHighWaterMark() {
        var machine = TestMachine.loading()
        _ = machine.response(generation: 1, asksDelegate: true)
        guard case .held = machine.body(Data(count: Self.high)) else { Issue.record("held"); return }
        check(machine.canAcceptMoreData(generation: 1, pendingBytes: 1).isRefusal)
        check(machine.drained(pendingBytes: 0) == nil, "the held body is still waiting")
    }

    @Test func aStaleLoadIsRefusedWithoutBeingRecordedAsWaiting() {
        var machine = TestMachine.loading()
        check(machine.canAcceptMoreData(generation: 7, pendingBytes: 0).isRefusal)
        #expect(machine.timeoutWatch?.idleClockStopped == false)
    }

    @Test func reportsFromAnOldGenerationAreIgnoredAfterARedirect() {
        var machine = TestMachine.loading()
        guard case .redirect(stop: let load?) = machine.redirect(generation: 1, canDeliverRefusal: false), load.name == "first" else {
            Issue.record("a load that cannot deliver a refusal stops at once"); return
        }
        guard case .follow(stop: nil) = machine.redirectFollowed() else { Issue.record("follow"); return }
        check(machine.loadStarting() == 2)
        check(machine.loadStarted(TestLoad(name: "second"), generation: 2))
        check(!machine.isCurrent(1))
        guard case .stale = machine.route(1) else { Issue.record("old challenge"); return }
        guard case .ignore = machine.response(generation: 1, asksDelegate: false) else { Issue.record("old response"); return }
        guard case .ignore = machine.finish(error: nil, generation: 1) else { Issue.record("old end"); return }
        check(machine.canAcceptMoreData(generation: 1, pendingBytes: 0).isRefusal)
        guard case .ignore = machine.redirect(generation: 1, canDeliverRefusal: true) else { Issue.record("old redirect"); return }
        check(!machine.waitingForConnectivity(generation: 1))
        check(machine.isCurrent(2))
    }

    @Test func aRefusedRedirectLetsTheKeptLoadDeliverWithoutANewGeneration() {
        var machine = TestMachine.loading()
        guard case .redirect(stop: nil) = machine.redirect(generation: 1, canDeliverRefusal: true) else {
            Issue.record("the load that can deliver a refusal is kept"); return
        }
        check(!machine.isCurrent(1), "while the delegate decides, the kept load's reports do not count")
        #expect(!machine.isLoading)
        guard case .deliverRefusal(let load) = machine.redirectRefused(), load.name == "first" else { Issue.record("refusal"); return }
        check(machine.isCurrent(1))
        #expect(machine.loadingGeneration == 1)
        guard case .finish(stop: let load?) = machine.finish(error: nil, generation: 1), load.name == "first" else {
            Issue.record("the kept load ends the task"); return
        }
    }

    @Test func aRefusedRedirectWithoutAKeptLoadIsDeliveredByTheTask() {
        var machine = TestMachine.loading()
        _ = machine.redirect(generation: 1, canDeliverRefusal: false)
        guard case .finishWithRedirectResponse = machine.redirectRefused() else { Issue.record("refusal"); return }
        check(!machine.isCurrent(1), "the stopped load never counts again")
        check(machine.isCurrent(nil))
        guard case .accept = machine.response(generation: nil, asksDelegate: true) else { Issue.record("response"); return }
        guard case .finish(stop: nil) = machine.finish(error: nil, generation: nil) else { Issue.record("finish"); return }
    }

    @Test func followingARedirectStopsTheKeptLoadOnce() {
        var machine = TestMachine.loading()
        _ = machine.redirect(generation: 1, canDeliverRefusal: true)
        guard case .follow(stop: let load?) = machine.redirectFollowed(), load.name == "first" else { Issue.record("follow"); return }
        guard case .ignore = machine.redirectFollowed() else { Issue.record("a second answer does nothing"); return }
        guard case .ignore = machine.redirectRefused() else { Issue.record("nor a contrary one"); return }
        guard case .cancel(stop: nil) = machine.cancel() else { Issue.record("nothing left to stop"); return }
    }

    @Test func cancelDuringARedirectDecisionStopsTheKeptLoadAndIgnoresTheAnswer() {
        var machine = TestMachine.loading()
        _ = machine.redirect(generation: 1, canDeliverRefusal: true)
        guard case .cancel(stop: let load?) = machine.cancel(), load.name == "first" else { Issue.record("cancel"); return }
        guard case .ignore = machine.redirectFollowed() else { Issue.record("follow after cancel"); return }
        guard case .ignore = machine.redirectRefused() else { Issue.record("refuse after cancel"); return }
        check(machine.loadStarting() == nil)
        #expect(machine.publicState == .canceling)
    }

    @Test func aFailureWhileRedirectingStopsTheKeptLoad() {
        // Too many redirects, or a redirect the delegate answered with a refused scheme.
        var machine = TestMachine.loading()
        _ = machine.redirect(generation: 1, canDeliverRefusal: true)
        guard case .finish(stop: let load?) = machine.finish(error: URLError(.unsupportedURL), generation: nil), load.name == "first" else {
            Issue.record("the task's failure stops the kept load"); return
        }
    }

    @Test func cancelDuringAChallengeStopsTheLoadAndLaterReportsAreStale() {
        var machine = TestMachine.loading()
        guard case .current = machine.route(1) else { Issue.record("the challenge counts"); return }
        guard case .cancel(stop: let load?) = machine.cancel(), load.name == "first" else { Issue.record("cancel"); return }
        // The delegate answers the challenge later; the handler retries and reports.
        guard case .stale = machine.route(1) else { Issue.record("stale after cancel"); return }
        guard case .ignore = machine.response(generation: 1, asksDelegate: false) else { Issue.record("response"); return }
        guard case .ignore = machine.finish(error: nil, generation: 1) else { Issue.record("end"); return }
        check(machine.completionStarted())
        check(!machine.completionStarted())
    }
}
