import Foundation

// The states of a task and the facts derived from them (`TaskStateMachine.swift` has the events).
extension TaskStateMachine {
    /// The states of a task, each with its own data.
    enum State {
        /// Created and never resumed.
        case initial
        /// Resumed, with no handler loading: the task is waiting for an upload's body stream, looking
        /// in the cache, or about to start a handler.
        case preparing(Preparing)
        /// A handler (or the task itself, serving a cached or refused-redirect response) delivers the
        /// response and body.
        case loading(Loading)
        /// A handler reported a redirect and the delegate decides whether to follow it.
        case redirecting(Redirecting)
        /// The task ends: its completion is queued behind the steps before it.
        case finishing(Finishing)
        /// The data task became a download task: reports from its load go to the successor.
        case handedOver(HandedOver)
        /// The completion was delivered (or started): nothing more happens.
        case completed
    }

    /// ``State/preparing(_:)``.
    struct Preparing {
        /// The generation of the last load started (0: none yet).
        var generation: Int
        var suspended: Bool
    }

    /// ``State/loading(_:)``.
    struct Loading {
        /// The generation the current load's reports carry.
        var generation: Int
        /// The handler instance; `nil` when the task delivers the result itself (a cached response,
        /// a refused redirect's response). Reports then come with no generation.
        var load: Load?
        /// Whether the handler was told to pause (back-pressure) and waits to be woken.
        var producer: Producer
        /// Where the response disposition is.
        var disposition: Disposition
        var suspended: Bool
        /// The handler cannot reach the server and keeps trying: the idle timeout does not apply.
        var waitingForConnectivity: Bool
    }

    /// ``State/redirecting(_:)``.
    struct Redirecting {
        /// The generation of the load that reported the redirect.
        var generation: Int
        /// That load, kept while the delegate decides when it can deliver the redirect response as
        /// the final result if the redirect is refused; `nil` when it was stopped.
        var deliverable: Load?
        var suspended: Bool
    }

    /// ``State/finishing(_:)``.
    struct Finishing {
        /// The error the completion carries; `nil` for success.
        var error: (any Error)?
        /// `cancel()` ended the task (public state `canceling`): delivery is never paused again.
        var cancelled: Bool
        var suspended: Bool
        /// Body chunks still held for a response disposition the delegate has not answered.
        var held: HeldBody?
        /// The load that ended while that disposition was pending: `.becomeStream` still asks its
        /// handler why the connection cannot be had, so the reason does not depend on whether the
        /// load ended before the delegate answered.
        var undecided: Load? = nil
    }

    /// ``State/handedOver(_:)``.
    struct HandedOver {
        /// The download task that took over.
        var successor: Successor
        /// The generation of the load it took over; its reports are forwarded.
        var generation: Int
    }

    /// A handler's producing state under back-pressure.
    enum Producer {
        /// It may deliver.
        case producing
        /// It was told to pause and waits for `resumeProducing`.
        case waiting
    }

    /// A data task's response disposition.
    enum Disposition {
        /// No response yet, or none the delegate is asked about.
        case none
        /// The delegate decides; body chunks arriving meanwhile are held, in order.
        case awaiting(HeldBody)
        /// The delegate decided; chunks are delivered as they arrive.
        case decided
    }

    /// Body chunks held while a response disposition is pending, and their total size.
    struct HeldBody {
        var chunks: [Data] = []
        var bytes = 0

        mutating func append(_ chunk: Data) {
            chunks.append(chunk)
            bytes += chunk.count
        }
    }
}

// MARK: - Derived facts

extension TaskStateMachine {
    /// The public state: computed, never stored.
    var publicState: URLSessionTask.State {
        switch state {
        case .initial:
            return .suspended
        case .preparing(let preparing):
            return preparing.suspended ? .suspended : .running
        case .loading(let loading):
            return loading.suspended ? .suspended : .running
        case .redirecting(let redirecting):
            return redirecting.suspended ? .suspended : .running
        case .finishing(let finishing):
            if finishing.cancelled { return .canceling }
            return finishing.suspended ? .suspended : .running
        case .handedOver, .completed:
            return .completed
        }
    }

    /// Whether the task's pipeline must hold its steps (the task is suspended; a cancelled task
    /// always delivers its completion).
    var isDeliveryPaused: Bool {
        switch state {
        case .initial: return true
        case .preparing(let preparing): return preparing.suspended
        case .loading(let loading): return loading.suspended
        case .redirecting(let redirecting): return redirecting.suspended
        case .finishing(let finishing): return finishing.suspended && !finishing.cancelled
        case .handedOver, .completed: return false
        }
    }

    /// Whether reports from `generation` (`nil`: the task itself) count now.
    func isCurrent(_ generation: Int?) -> Bool {
        switch state {
        case .loading(let loading):
            guard let generation else { return true }
            return loading.load != nil && loading.generation == generation
        case .preparing, .redirecting:
            return generation == nil
        case .initial, .finishing, .handedOver, .completed:
            return false
        }
    }

    /// Where a report from `generation` goes.
    enum Route {
        /// This task handles it.
        case current
        /// It comes from a load that no longer counts: ignore it.
        case stale
        /// The task became this download task, which handles it.
        case forward(Successor)
    }

    /// Where a report from `generation` goes (a challenge, metrics, upload progress…).
    func route(_ generation: Int?) -> Route {
        if isCurrent(generation) { return .current }
        if case .handedOver(let handedOver) = state, generation == nil || generation == handedOver.generation {
            return .forward(handedOver.successor)
        }
        return .stale
    }

    /// Whether steps may still be added to the pipeline (not once the completion is queued).
    var acceptsSteps: Bool {
        switch state {
        case .initial, .preparing, .loading, .redirecting: return true
        case .finishing, .handedOver, .completed: return false
        }
    }

    /// The running handler instance, if any.
    var currentLoad: Load? {
        if case .loading(let loading) = state { return loading.load }
        return nil
    }

    /// The handler whose response's disposition the delegate decides: the running load's, or the
    /// one that ended meanwhile (``Finishing/undecided``).
    var loadAwaitingDisposition: Load? {
        switch state {
        case .loading(let loading): return loading.load
        case .finishing(let finishing): return finishing.held == nil ? nil : finishing.undecided
        default: return nil
        }
    }

    /// Whether a handler is loading (the timeout monitor watches the task).
    var isLoading: Bool { currentLoad != nil }

    /// Whether the completion was delivered (or started).
    var isCompleted: Bool {
        switch state {
        case .completed, .handedOver: return true
        default: return false
        }
    }

    /// What the timeout monitor checks: the running load's generation, whether the idle clock stands
    /// still (Courier holds the transfer back: the handler waits to be woken, or the delegate decides
    /// about the response), and whether the idle timeout applies at all. `nil`: nothing to time.
    var timeoutWatch: (generation: Int, idleClockStopped: Bool, idleTimeoutApplies: Bool)? {
        guard case .loading(let loading) = state, loading.load != nil, !loading.suspended else { return nil }
        var stopped = loading.producer == .waiting
        if case .awaiting = loading.disposition { stopped = true }
        return (loading.generation, stopped, !loading.waitingForConnectivity)
    }
}
