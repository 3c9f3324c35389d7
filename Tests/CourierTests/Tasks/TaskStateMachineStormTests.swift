import Foundation
import Testing
@testable import Courier

/// Random interleavings of every event, checking after each one what must always hold: each load is
/// stopped at most once and every load is stopped by the end; a handler is woken only after it was
/// told to wait; the completion starts exactly once; nothing changes after it.
@Suite("Task state machine: random storms")
struct TaskStateMachineStormTests {
    /// What the test knows from the actions alone.
    struct Observer {
        var started: [String: Int] = [:]
        var stopped: [String: Int] = [:]
        var waiting: Set<String> = []
        var completions = 0
        var failures: [String] = []

        mutating func stop(_ load: TestLoad?, _ event: String) {
            guard let load else { return }
            stopped[load.name, default: 0] += 1
            waiting.remove(load.name)
            if stopped[load.name] ?? 0 > 1 { failures.append("\(load.name) stopped twice (\(event))") }
        }

        mutating func wake(_ load: TestLoad?, _ event: String) {
            guard let load else { return }
            if waiting.remove(load.name) == nil { failures.append("\(load.name) woken without waiting (\(event))") }
        }
    }

    static func run(seed: UInt64, events: Int) -> [String] {
        var random = SplitMix64(seed: seed)
        var machine = TestMachine()
        var seen = Observer()
        var nextLoad = 0
        var generation: Int? = nil
        var lives = 0
        for step in 0..<events {
            let before = machine.publicState
            let event = Int.random(in: 0..<16, using: &random)
            let reported: Int? = [generation, generation.map { $0 - 1 }, nil].randomElement(using: &random) ?? nil
            switch event {
            case 0:
                if case .resumeDelivery(let wake) = machine.resume() { seen.wake(wake, "resume") }
            case 1:
                _ = machine.suspend()
            case 2:
                if Int.random(in: 0..<8, using: &random) == 0, case .cancel(let stop) = machine.cancel() { seen.stop(stop, "cancel") }
            case 3:
                if let starting = machine.loadStarting() {
                    nextLoad += 1
                    let load = TestLoad(name: "load\(nextLoad)")
                    if machine.loadStarted(load, generation: starting) {
                        seen.started[load.name] = starting
                        generation = starting
                    }
                }
            case 4:
                _ = machine.response(generation: reported, asksDelegate: Bool.random(using: &random))
            case 5:
                if case .current = machine.route(reported) { _ = machine.body(Data(count: 1024)) }
            case 6:
                if let current = generation {
                    let pending = Int.random(in: 0...(2 * TestMachine.highWaterBytes), using: &random)
                    let answer = machine.canAcceptMoreData(generation: current, pendingBytes: pending)
                    if answer.isRefusal, let load = machine.currentLoad, seen.started[load.name] == current {
                        seen.waiting.insert(load.name)
                    }
                }
            case 7:
                seen.wake(machine.drained(pendingBytes: Int.random(in: 0...TestMachine.highWaterBytes, using: &random)), "drained")
            case 8:
                if let current = generation, case .redirect(let stop) = machine.redirect(generation: current, canDeliverRefusal: Bool.random(using: &random)) {
                    seen.stop(stop, "redirect")
                }
            case 9:
                if case .follow(let stop) = machine.redirectFollowed() { seen.stop(stop, "follow") }
            case 10:
                _ = machine.redirectRefused()
            case 11:
                if Int.random(in: 0..<4, using: &random) == 0, case .finish(let stop) = machine.finish(error: nil, generation: reported) {
                    seen.stop(stop, "finish")
                }
            case 12:
                _ = machine.allow()
            case 13:
                if machine.completionStarted() {
                    seen.completions += 1
                    if seen.completions > 1 { seen.failures.append("second completion at \(step)") }
                }
            case 14:
                if let current = generation { _ = machine.waitingForConnectivity(generation: current) }
            default:
                _ = machine.servingWithoutHandler()
            }
            // What must always hold.
            if before == .completed, machine.publicState != .completed { seen.failures.append("left completed at \(step)") }
            if machine.publicState == .suspended, !machine.isDeliveryPaused { seen.failures.append("suspended but delivering at \(step)") }
            if machine.publicState == .canceling, machine.isDeliveryPaused { seen.failures.append("cancelled but paused at \(step)") }
            if machine.publicState == .completed || machine.publicState == .canceling, machine.acceptsSteps {
                seen.failures.append("accepts steps after the end at \(step)")
            }
            if !machine.acceptsSteps {
                for (name, _) in seen.started where seen.stopped[name] != 1 {
                    seen.failures.append("\(name) not stopped once by the end (\(seen.stopped[name] ?? 0)) at \(step)")
                }
            }
            if !seen.failures.isEmpty { return seen.failures.map { "seed \(seed): \($0)" } }
            if seen.completions == 1 {
                // One life ended as it must: start another.
                lives += 1
                machine = TestMachine()
                seen = Observer()
                generation = nil
            }
        }
        return lives > 10 ? [] : ["seed \(seed): only \(lives) tasks completed"]
    }

    @Test(arguments: [UInt64(1), 2, 3, 42, 2024])
    func tenThousandRandomEventsKeepEveryInvariant(seed: UInt64) {
        let failures = Self.run(seed: seed, events: 10_000)
        #expect(failures.isEmpty, "\(failures.prefix(5))")
    }

    @Test func suspendResumeStormsNeverLoseAWakeUp() {
        // Suspend and resume flipping around back-pressure: whenever the handler was told to wait
        // and the task runs with nothing pending, one wake-up has been sent.
        var random = SplitMix64(seed: 7)
        var machine = TestMachine.loading()
        var waiting = false
        for _ in 0..<10_000 {
            switch Int.random(in: 0..<4, using: &random) {
            case 0:
                if machine.suspend() {}
            case 1:
                if case .resumeDelivery(let wake) = machine.resume(), wake != nil {
                    #expect(waiting)
                    waiting = false
                }
            case 2:
                if machine.canAcceptMoreData(generation: 1, pendingBytes: TestMachine.highWaterBytes + 1).isRefusal { waiting = true }
            default:
                if machine.drained(pendingBytes: 0) != nil {
                    #expect(waiting)
                    waiting = false
                }
            }
        }
        if case .resumeDelivery(let wake) = machine.resume(), wake != nil { waiting = false }
        if machine.drained(pendingBytes: 0) != nil { waiting = false }
        #expect(!waiting, "a running task with nothing pending left its handler waiting")
    }
}
