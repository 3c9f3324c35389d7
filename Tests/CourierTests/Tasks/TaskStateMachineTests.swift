import Foundation
import Testing
@testable import Courier

/// A handler instance, as the machine sees it: a name.
struct TestLoad: Equatable {
    let name: String
}

typealias TestMachine = TaskStateMachine<TestLoad, String>

extension TaskStateMachine where Load == TestLoad, Successor == String {
    /// A machine resumed and loading `load` (generation 1).
    static func loading(_ load: TestLoad = TestLoad(name: "first")) -> Self {
        var machine = Self()
        _ = machine.resume()
        let generation = machine.loadStarting() ?? -1
        _ = machine.loadStarted(load, generation: generation)
        return machine
    }

    /// The generation of the running load, or -1.
    var loadingGeneration: Int {
        if case .loading(let loading) = state { return loading.generation }
        return -1
    }
}

/// Every transition of ``TaskStateMachine``, with no session and no server.
@Suite("Task state machine: lifecycle")
struct TaskStateMachineLifecycleTests {
    @Test func aNewTaskIsSuspendedAndPausedUntilResumed() {
        var machine = TestMachine()
        #expect(machine.publicState == .suspended)
        #expect(machine.isDeliveryPaused)
        check(!machine.suspend(), "suspending a task never resumed changes nothing")
        guard case .beginLoading = machine.resume() else { Issue.record("first resume must begin loading"); return }
        #expect(machine.publicState == .running)
        #expect(!machine.isDeliveryPaused)
        guard case .none = machine.resume() else { Issue.record("a second resume must do nothing"); return }
    }

    @Test func startingALoadGivesAGrowingGeneration() {
        var machine = TestMachine()
        _ = machine.resume()
        check(machine.loadStarting() == 1)
        check(machine.loadStarted(TestLoad(name: "a"), generation: 1))
        #expect(machine.isLoading)
        check(machine.isCurrent(1))
        check(machine.isCurrent(nil))
        check(!machine.isCurrent(2))
        #expect(machine.currentLoad == TestLoad(name: "a"))
    }

    @Test func aLoadStartedForAnOlderGenerationIsRefused() {
        var machine = TestMachine()
        _ = machine.resume()
        _ = machine.loadStarting()
        check(machine.loadStarting() == 2)
        check(!machine.loadStarted(TestLoad(name: "old"), generation: 1))
        check(machine.loadStarted(TestLoad(name: "new"), generation: 2))
    }

    @Test func aCancelBetweenStartingAndStartedKeepsTheHandlerFromStarting() {
        var machine = TestMachine()
        _ = machine.resume()
        let generation = machine.loadStarting() ?? -1
        guard case .cancel(stop: nil) = machine.cancel() else { Issue.record("cancel must stop nothing yet"); return }
        check(!machine.loadStarted(TestLoad(name: "late"), generation: generation))
        check(machine.loadStarting() == nil)
        #expect(machine.publicState == .canceling)
    }

    @Test func cancellingANewTaskEndsItWithoutLoading() {
        var machine = TestMachine()
        guard case .cancel(stop: nil) = machine.cancel() else { Issue.record("cancel must end the task"); return }
        #expect(machine.publicState == .canceling)
        #expect(!machine.isDeliveryPaused, "a cancelled task delivers its completion")
        guard case .none = machine.resume() else { Issue.record("resume after cancel must do nothing"); return }
        check(machine.completionStarted())
        #expect(machine.publicState == .completed)
    }

    @Test func suspendAndResumeToggleDeliveryInEveryRunningState() {
        var machine = TestMachine()
        _ = machine.resume()
        check(machine.suspend())
        check(!machine.suspend(), "already suspended")
        #expect(machine.publicState == .suspended && machine.isDeliveryPaused)
        guard case .resumeDelivery(wake: nil) = machine.resume() else { Issue.record("preparing resumes delivery"); return }
        let generation = machine.loadStarting() ?? -1
        _ = machine.loadStarted(TestLoad(name: "a"), generation: generation)
        check(machine.suspend())
        guard case .resumeDelivery(wake: nil) = machine.resume() else { Issue.record("loading resumes delivery"); return }
        _ = machine.redirect(generation: generation, canDeliverRefusal: true)
        check(machine.suspend())
        #expect(machine.publicState == .suspended)
        guard case .resumeDelivery(wake: nil) = machine.resume() else { Issue.record("redirecting resumes delivery"); return }
        _ = machine.finish(error: nil, generation: nil)
        check(machine.suspend())
        #expect(machine.isDeliveryPaused, "a finished load's completion waits for resume")
        guard case .resumeDelivery(wake: nil) = machine.resume() else { Issue.record("finishing resumes delivery"); return }
        #expect(machine.publicState == .running)
    }

    @Test func aSuspendedTaskKeepsItsSuspensionAcrossALoadStart() {
        var machine = TestMachine()
        _ = machine.resume()
        _ = machine.suspend()
        let generation = machine.loadStarting() ?? -1
        _ = machine.loadStarted(TestLoad(name: "a"), generation: generation)
        #expect(machine.publicState == .suspended)
        check(machine.canAcceptMoreData(generation: generation, pendingBytes: 0).isRefusal)
    }

    @Test func finishStopsTheLoadOnceAndQueuesTheCompletion() {
        var machine = TestMachine.loading()
        guard case .finish(stop: let load?) = machine.finish(error: nil, generation: 1), load.name == "first" else {
            Issue.record("finish must stop the load"); return
        }
        #expect(machine.publicState == .running)
        #expect(!machine.acceptsSteps)
        guard case .ignore = machine.finish(error: nil, generation: 1) else { Issue.record("a second end is ignored"); return }
        guard case .ignore = machine.finish(error: nil, generation: nil) else { Issue.record("the task's own end too"); return }
        guard case .cancel(stop: nil) = machine.cancel() else {
            Issue.record("cancel after the end still wins, without stopping the load again"); return
        }
        #expect(machine.publicState == .canceling)
    }

    @Test func finishAfterCancelIsIgnored() {
        var machine = TestMachine.loading()
        guard case .cancel(stop: let load?) = machine.cancel(), load.name == "first" else { Issue.record("cancel stops the load"); return }
        guard case .ignore = machine.finish(error: URLError(.timedOut), generation: 1) else {
            Issue.record("the stopped load's end is ignored"); return
        }
        guard case .none = machine.cancel() else { Issue.record("cancelling twice changes nothing"); return }
    }

    @Test func theCompletionStartsExactlyOnce() {
        var machine = TestMachine.loading()
        check(!machine.completionStarted(), "no completion while loading")
        _ = machine.finish(error: nil, generation: 1)
        check(machine.completionStarted())
        #expect(machine.publicState == .completed)
        check(!machine.completionStarted())
        guard case .none = machine.cancel() else { Issue.record("cancel after completion does nothing"); return }
        guard case .none = machine.resume() else { Issue.record("resume after completion does nothing"); return }
        check(!machine.suspend())
    }

    @Test func theTaskServingACachedResponseReportsWithoutAGeneration() {
        var machine = TestMachine()
        _ = machine.resume()
        check(machine.servingWithoutHandler())
        check(machine.isCurrent(nil))
        #expect(!machine.isLoading, "no handler to time out")
        guard case .accept = machine.response(generation: nil, asksDelegate: false) else { Issue.record("response"); return }
        guard case .finish(stop: nil) = machine.finish(error: nil, generation: nil) else { Issue.record("finish"); return }
    }

    @Test func theTimeoutWatchStopsTheIdleClockWhileCourierHoldsTheTransfer() {
        var machine = TestMachine.loading()
        #expect(machine.timeoutWatch?.idleClockStopped == false)
        _ = machine.canAcceptMoreData(generation: 1, pendingBytes: TestMachine.highWaterBytes + 1)
        #expect(machine.timeoutWatch?.idleClockStopped == true, "the handler waits to be woken")
        _ = machine.drained(pendingBytes: 0)
        _ = machine.response(generation: 1, asksDelegate: true)
        #expect(machine.timeoutWatch?.idleClockStopped == true, "the delegate decides about the response")
        check(machine.waitingForConnectivity(generation: 1))
        #expect(machine.timeoutWatch?.idleTimeoutApplies == false)
        _ = machine.suspend()
        #expect(machine.timeoutWatch == nil, "a suspended task is not timed")
    }
}

/// `#expect` for a condition that calls a mutating event (the macro cannot capture `inout` state).
func check(_ condition: Bool, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(condition, comment, sourceLocation: sourceLocation)
}

extension TaskStateMachine.FlowAnswer {
    var isRefusal: Bool {
        if case .refuse = self { return true }
        return false
    }

    var isAcceptance: Bool {
        if case .accept = self { return true }
        return false
    }
}
