import Courier
import Foundation

/// A task's lifecycle in the agent, as a pure state machine: each method takes one event, changes
/// the phase and returns what the agent must do. Nothing here does I/O.
///
/// <!-- fragment: a state diagram -->
/// ```
/// waiting ──start──▶ running(g) ──transferEnded(g)──▶ completed
///    ▲  ▲               │  │  └──transferEnded(g), retryable──▶ waiting (after 1, 2, 4 … 60 s)
///    │  └──resume── suspended ◀──suspend──┘  (the transfer stops; its resume data is kept)
///    └──recover (agent restarted) ── running
/// any but completed ──cancel──▶ completed
/// ```
///
/// Each transfer the agent starts gets a new generation `g`; the end of a transfer that was
/// stopped (suspended, cancelled, superseded) carries an old generation and changes nothing.
struct AgentTaskLifecycle: Equatable, Sendable {
    /// Where the task is.
    enum Phase: Equatable, Sendable {
        case waiting
        case running(generation: Int)
        case suspended
        case completed
    }

    private(set) var phase: Phase
    private(set) var generation = 0
    /// Retries after transient failures so far.
    private(set) var retries = 0
    /// The longest delay between retries, in seconds. Retries go on until the task's resource
    /// timeout ends it (the agent's housekeeping), as background tasks wait for the network.
    static let maximumDelay: Double = 60

    /// A lifecycle starting in `phase` (as stored: a stored `running` task is recovered first).
    init(stored phase: AgentTaskPhase) {
        switch phase {
        case .waiting, .running: self.phase = .waiting
        case .suspended: self.phase = .suspended
        case .completed: self.phase = .completed
        }
    }

    /// The phase to store and show.
    var storedPhase: AgentTaskPhase {
        switch phase {
        case .waiting: return .waiting
        case .running: return .running
        case .suspended: return .suspended
        case .completed: return .completed
        }
    }

    /// A transfer slot is free: a waiting task starts a transfer of a new generation.
    mutating func start() -> Int? {
        guard phase == .waiting else { return nil }
        generation += 1
        phase = .running(generation: generation)
        return generation
    }

    /// What `suspend` does.
    enum SuspendAction: Equatable, Sendable {
        case none
        /// Store the phase.
        case store
        /// Store the phase and stop the running transfer, keeping its resume data.
        case stopTransfer(generation: Int)
    }

    /// The app suspends the task.
    mutating func suspend() -> SuspendAction {
        switch phase {
        case .waiting:
            phase = .suspended
            return .store
        case .running(let current):
            phase = .suspended
            return .stopTransfer(generation: current)
        case .suspended, .completed:
            return .none
        }
    }

    /// The app resumes a suspended task: it waits for a slot again. `true` when it changed.
    mutating func resume() -> Bool {
        guard phase == .suspended else { return false }
        phase = .waiting
        return true
    }

    /// What `cancel` does.
    enum CancelAction: Equatable, Sendable {
        case none
        /// Complete with `cancelled`, stopping the running transfer of `stop` when there is one.
        case complete(stop: Int?)
    }

    /// The app (or `courier agent cancel`) cancels the task.
    mutating func cancel() -> CancelAction {
        switch phase {
        case .completed:
            return .none
        case .running(let current):
            phase = .completed
            return .complete(stop: current)
        case .waiting, .suspended:
            phase = .completed
            return .complete(stop: nil)
        }
    }

    /// What the end of a transfer does.
    enum EndAction: Equatable, Sendable {
        /// A stopped transfer's end: nothing.
        case ignore
        /// The task ends with this transfer's outcome.
        case complete
        /// A transient failure: wait `delay` seconds, then start again (from the resume data).
        case retry(delay: Double)
    }

    /// The transfer of `generation` ended; `transient` when it failed in a way worth retrying.
    mutating func transferEnded(generation ended: Int, transient: Bool) -> EndAction {
        guard phase == .running(generation: ended) else { return .ignore }
        if transient {
            retries += 1
            phase = .waiting
            return .retry(delay: min(Double(1 << min(retries - 1, 16)), Self.maximumDelay))
        }
        phase = .completed
        return .complete
    }
}
