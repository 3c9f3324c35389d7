import Foundation

// What the events of `TaskStateMachine.swift` answer: the actions the task performs.
extension TaskStateMachine {
    /// What `resume()` asks of the task.
    enum ResumeAction {
        /// Nothing changes.
        case none
        /// First resume: start loading.
        case beginLoading
        /// Resume delivery; wake this load's handler if it was paused.
        case resumeDelivery(wake: Load?)
    }

    /// What `cancel()` asks of the task.
    enum CancelAction {
        /// Already cancelled or completed: nothing changes.
        case none
        /// Replace every queued step with the cancelled completion; stop this load first.
        case cancel(stop: Load?)
    }

    /// What ending a load asks of the task.
    enum FinishAction {
        /// A stale report, or the task is already ending.
        case ignore
        /// The report belongs to the download task this task became.
        case forward(Successor)
        /// Queue the completion after the steps already queued; stop this load.
        case finish(stop: Load?)
    }

    /// What a response asks of the task.
    enum ResponseAction {
        /// A stale report.
        case ignore
        /// The report belongs to the download task this task became.
        case forward(Successor)
        /// Record it; when the delegate is asked about it, body chunks are held until it answers.
        case accept
    }

    /// What a body chunk asks of the task.
    enum BodyAction {
        /// The chunk is held (the delegate decides about the response): nothing to deliver now.
        case held
        /// Deliver (or write, or collect) it now.
        case pass
    }

    /// The answer to a flow-controlled handler's `canAcceptMoreData`.
    enum FlowAnswer {
        /// It may deliver.
        case accept
        /// It must pause until woken (the task is suspended, or too much is waiting), or stop for
        /// good (a stale load).
        case refuse
        /// The report belongs to the download task this task became.
        case forward(Successor)
    }

    /// What a redirect asks of the task.
    enum RedirectAction {
        /// A stale report.
        case ignore
        /// The report belongs to the download task this task became.
        case forward(Successor)
        /// Ask the delegate; stop this load now (it cannot deliver a refused redirect).
        case redirect(stop: Load?)
    }

    /// What following a redirect asks of the task.
    enum FollowAction {
        /// The task moved on (cancelled): load nothing.
        case ignore
        /// Start the next load; stop the kept one first.
        case follow(stop: Load?)
    }

    /// What refusing a redirect asks of the task.
    enum RefusalAction {
        /// The task moved on (cancelled).
        case ignore
        /// The kept load delivers the redirect response, its body and its end.
        case deliverRefusal(Load)
        /// The task delivers the redirect response as its result itself, then finishes.
        case finishWithRedirectResponse
    }

    /// The generation a hand-over names when the load had already ended: no load has it
    /// (generations start at 1).
    static var endedGeneration: Int { -1 }

    /// What the successor of a `.becomeDownload` takes over.
    struct Handover {
        /// The running load, or `nil` when it already ended (or the task itself was delivering).
        var load: Load?
        /// The generation the load's reports carry; ``endedGeneration`` when the load had ended
        /// (no report of it counts any more: only the task's own, with no generation).
        var generation: Int
        /// The chunks held while the delegate decided, in order.
        var held: HeldBody
        /// The load's handler waits to be woken.
        var producerWaiting: Bool
        /// `nil` while the load runs; otherwise how it ended (`.some(nil)`: success).
        var ended: (any Error)??
    }

    /// The next held chunks to write, for a download task that adopted a load.
    enum HeldRelease {
        /// Write these, then ask again.
        case chunks([Data])
        /// Nothing is held any more: chunks pass from now on. Wake this load's handler, if any.
        case done(wake: Load?)
    }
}
