import Foundation

/// The steps a task still has to deliver to its delegate or completion handler, in order: the data
/// of the task's pipeline, with no lock and no lifecycle of its own.
///
/// The task keeps it in its `core`, under its lock, next to its ``TaskStateMachine``: whether
/// delivery is paused (a suspended task) is the machine's fact, passed in as `paused`; whether the
/// task still accepts steps is the machine's too (``TaskStateMachine/acceptsSteps``). Each mutating
/// call answers whether a drain must be scheduled on the delegate queue; the task does that after
/// unlocking, and the drain (`URLSessionTask+Delivery.swift`) takes the steps with ``next(paused:)``.
///
/// A step either finishes when it returns (`immediate`: a chunk of data, progress) or holds the
/// queue until the delegate calls its completion handler (`awaiting`: a response disposition, a
/// redirect, a challenge, a body stream). The final step (the completion) is kept apart: it runs
/// after every other step, once.
struct TaskEventQueue {
    /// A step that calls `resume` once the delegate has answered.
    typealias AwaitingStep = @Sendable (_ resume: @escaping @Sendable () -> Void) -> Void

    /// One step.
    enum Step: Sendable {
        /// Done when it returns; `bytes`: the body bytes it delivers.
        case immediate(@Sendable () -> Void, bytes: Int)
        /// Holds the queue until it calls its `resume` argument.
        case awaiting(AwaitingStep)
    }

    /// What the drain runs next.
    enum Next {
        /// Nothing can run now (empty, paused, or held by an awaiting step); the drain ends.
        case none
        /// An immediate step.
        case immediate(@Sendable () -> Void, bytes: Int)
        /// An awaiting step; its `resume` passes `ticket` to ``resumed(ticket:paused:)``.
        case awaiting(AwaitingStep, ticket: Int)
        /// The completion: nothing runs after it.
        case final(@Sendable () -> Void)
    }

    private var steps: [Step] = []
    /// What a taken step's slot holds until the array is compacted: the step itself (and the body
    /// chunk it captured) is released as soon as it is taken, even while the drain keeps going.
    private static let spent = Step.immediate({}, bytes: 0)
    private var head = 0
    /// A drain is scheduled or running.
    private var draining = false
    /// The ticket of the awaiting step holding the queue, if one does.
    private var awaited: Int?
    private var lastTicket = 0
    /// The completion, once queued.
    private var final: (@Sendable () -> Void)?
    /// Body bytes queued and not yet delivered (back-pressure).
    private(set) var pendingBytes = 0

    /// Whether the completion is queued and is the only thing left to run (no step before it, none
    /// awaiting an answer).
    var holdsOnlyFinal: Bool { final != nil && awaited == nil && head >= steps.count }

    /// Adds a step at the end.
    mutating func append(_ step: Step, paused: Bool) -> Bool {
        if case .immediate(_, let bytes) = step { pendingBytes += bytes }
        steps.append(step)
        return scheduleIfNeeded(paused: paused)
    }

    /// Puts `chunks` (each with the body bytes it delivers) ahead of everything still queued: the
    /// body held while the response disposition was pending comes right after it.
    mutating func insertNext(_ chunks: [(bytes: Int, run: @Sendable () -> Void)], paused: Bool) -> Bool {
        guard !chunks.isEmpty else { return false }
        steps.insert(contentsOf: chunks.map { Step.immediate($0.run, bytes: $0.bytes) }, at: head)
        pendingBytes += chunks.reduce(0) { $0 + $1.bytes }
        return scheduleIfNeeded(paused: paused)
    }

    /// Queues the completion after the steps already queued.
    mutating func close(withFinal step: @escaping @Sendable () -> Void, paused: Bool) -> Bool {
        final = step
        return scheduleIfNeeded(paused: paused)
    }

    /// Drops every step not yet run, releases an awaiting step, and makes `step` the completion
    /// (a cancel).
    mutating func replaceAll(withFinal step: @escaping @Sendable () -> Void, paused: Bool) -> Bool {
        steps.removeAll(keepingCapacity: false)
        head = 0
        pendingBytes = 0
        awaited = nil
        final = step
        return scheduleIfNeeded(paused: paused)
    }

    /// Delivery may have been released (the task resumed): whether a drain must be scheduled.
    mutating func kick(paused: Bool) -> Bool {
        scheduleIfNeeded(paused: paused)
    }

    /// The awaiting step with `ticket` was answered; an answer to a step dropped since is ignored.
    mutating func resumed(ticket: Int, paused: Bool) -> Bool {
        guard awaited == ticket else { return false }
        awaited = nil
        return scheduleIfNeeded(paused: paused)
    }

    /// The next thing the drain runs. ``Next/none`` ends the drain: the next step added schedules
    /// a new one.
    mutating func next(paused: Bool) -> Next {
        guard awaited == nil, !paused else { return stopDraining() }
        if head < steps.count {
            let step = steps[head]
            steps[head] = Self.spent
            head += 1
            if head > 64 && head * 2 > steps.count {
                steps.removeFirst(head)
                head = 0
            }
            switch step {
            case .immediate(let run, let bytes):
                pendingBytes -= bytes
                return .immediate(run, bytes: bytes)
            case .awaiting(let run):
                lastTicket &+= 1
                awaited = lastTicket
                return .awaiting(run, ticket: lastTicket)
            }
        }
        if let step = final {
            final = nil
            steps.removeAll(keepingCapacity: false)
            head = 0
            return .final(step)
        }
        return stopDraining()
    }

    private mutating func stopDraining() -> Next {
        draining = false
        if head >= steps.count {
            steps.removeAll(keepingCapacity: true)
            head = 0
        }
        return .none
    }

    /// Whether a drain must be scheduled now; marks it scheduled.
    private mutating func scheduleIfNeeded(paused: Bool) -> Bool {
        guard !draining, awaited == nil, !paused, head < steps.count || final != nil else { return false }
        draining = true
        return true
    }
}
