import Foundation
import Testing
@testable import CourierAgentCore

/// The agent's task lifecycle, on events alone.
@Suite("Agent task lifecycle")
struct AgentTaskLifecycleTests {
    @Test("a started task that ends completes; the end of a stopped transfer changes nothing")
    func staleEndIsIgnored() {
        var lifecycle = AgentTaskLifecycle(stored: .waiting)
        let first = lifecycle.start()
        _ = lifecycle.suspend()
        _ = lifecycle.resume()
        let second = lifecycle.start()
        let stale = lifecycle.transferEnded(generation: first ?? 0, transient: false)
        let current = lifecycle.transferEnded(generation: second ?? 0, transient: false)
        #expect([stale, current] == [.ignore, .complete] && lifecycle.phase == .completed)
    }

    @Test("transient failures retry with a delay growing to a minute and never give up (the resource timeout ends the task)")
    func transientFailuresRetry() {
        var lifecycle = AgentTaskLifecycle(stored: .waiting)
        var actions: [AgentTaskLifecycle.EndAction] = []
        for _ in 0..<9 {
            let generation = lifecycle.start() ?? 0
            actions.append(lifecycle.transferEnded(generation: generation, transient: true))
        }
        let last = lifecycle.transferEnded(generation: lifecycle.start() ?? 0, transient: false)
        #expect(actions == [1, 2, 4, 8, 16, 32, 60, 60, 60].map { .retry(delay: $0) } && last == .complete)
    }

    @Test("a task stored as running waits to start again after a restart; cancelling it stops nothing")
    func recoveredTaskWaits() {
        var lifecycle = AgentTaskLifecycle(stored: .running)
        #expect(lifecycle.phase == .waiting && lifecycle.cancel() == .complete(stop: nil))
    }
}
