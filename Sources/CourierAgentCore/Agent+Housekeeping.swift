import Courier
import Foundation

// The housekeeping tick (every 250 ms): tasks whose time came start, tasks past their resource
// timeout end, expired partial files go, and the idle exit is decided.
extension Agent {
    /// Runs one tick; `true` when the agent has been idle (no client, nothing to run) for the idle
    /// timeout and should exit.
    func tick() -> Bool {
        let (effects, idle): (AgentEffects, Bool) = state.withLock { state in
            var effects = endTimedOutLocked(&state)
            let now = Date()
            effects.merge(abandonQuestionsLocked(&state) { $0.deadline <= now })
            effects.merge(scheduleLocked(&state))
            if now.timeIntervalSince(state.lastSweep) >= 60 {
                state.lastSweep = now
                effects.merge(AgentPartialFiles.sweepExpired(state.store, in: directories.downloads, now: now))
            }
            let busy = !state.clients.isEmpty || state.tasks.values.contains {
                switch $0.lifecycle.phase {
                case .waiting, .running: return true
                case .suspended, .completed: return false
                }
            }
            if busy { state.lastBusy = now }
            return (effects, !busy && now.timeIntervalSince(state.lastBusy) >= options.idleExit)
        }
        perform(effects)
        return idle
    }

    /// Ends every task older than its identifier's `timeoutIntervalForResource` (counted from the
    /// task's creation, which is stored, so agent restarts do not reset it) with `timedOut`.
    private func endTimedOutLocked(_ state: inout AgentState) -> AgentEffects {
        var effects = AgentEffects()
        let now = Date()
        let overdue = state.tasks.values.filter { entry in
            entry.lifecycle.phase != .completed
                && now.timeIntervalSince(entry.row.created) >= settingsLocked(&state, entry.row.key.session).resourceTimeout
        }.map(\.row)
        for row in overdue {
            let timeout = settingsLocked(&state, row.key.session).resourceTimeout
            let error = AgentErrorRecord(code: .timedOut, message:
                "The task did not finish within its resource timeout (timeoutIntervalForResource, \(Int(timeout)) s from its creation).",
                url: row.request.url)
            if let ended = try? endKeepingResumeDataLocked(&state, row.key, error) { effects.merge(ended) }
        }
        return effects
    }
}
