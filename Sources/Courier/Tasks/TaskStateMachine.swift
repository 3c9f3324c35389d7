import Foundation

/// The life of one task, from `resume()` to its one completion, as one value: the state it is in and
/// the data that state needs, nothing else.
///
/// Events go in (`resume`, `suspend`, `cancel`, a handler's reports, the delegate's answers, the
/// pipeline's progress) and each returns what the task must do. The machine is pure: no locks, no
/// queues, no I/O and no reference to the task. The task keeps it in its `core` under its lock, feeds
/// it there, and performs the returned actions after unlocking, where they call out (a handler, the
/// delegate queue, another task).
///
/// `Load` stands for a handler instance the task started (the task uses ``ActiveLoad``); `Successor`
/// for the download task a data task became (`.becomeDownload`). Each load gets a *generation*, a
/// number that grows with every load the task starts; a handler's reports carry it, and only the
/// current load's reports count (``isCurrent(_:)``). A report with no generation (`nil`) comes from
/// the task itself: a cached response it serves, a refused redirect's response, a failure before
/// any handler ran.
///
/// The transitions (`S` marks a state that carries `suspended`):
///
/// | from | event | to | action |
/// |---|---|---|---|
/// | initial | resume | preparing | begin loading |
/// | preparing | loadStarting, loadStarted | loading | start the handler |
/// | preparing | servingWithoutHandler | loading (no load) | deliver the cached response |
/// | loading | response (delegate asked) | loading, disposition awaiting | hold body chunks |
/// | loading | allow | loading, decided | deliver held chunks first |
/// | loading | becomeDownload | handedOver | successor adopts load and held chunks |
/// | loading | canAcceptMoreData over the mark, or suspended | loading, producer waiting | pause |
/// | loading | drained below the mark, or resume | loading, producing | wake the producer |
/// | loading | redirect | redirecting | stop the load unless it can deliver a refusal |
/// | redirecting | follow | preparing | stop the kept load; start the next |
/// | redirecting | refuse | loading | the kept load delivers the 3xx, or the task does |
/// | any S | suspend / resume | same, suspended toggled | pause / resume delivery |
/// | preparing, loading, redirecting | finish | finishing | stop the load; queue the completion |
/// | any before completed | cancel | finishing, cancelled | stop the load; replace queued steps |
/// | finishing | completionStarted | completed | deliver the completion |
struct TaskStateMachine<Load, Successor> {
    /// Where the task is. The only stored property: every other fact of a task's life is derived.
    private(set) var state: State = .initial

    /// Body bytes waiting for delivery above which a producing handler is paused.
    static var highWaterBytes: Int { 8 << 20 }
    /// Waiting body bytes below which a paused handler is woken.
    static var lowWaterBytes: Int { 2 << 20 }
}

// MARK: - The events of a task's own life

extension TaskStateMachine {
    /// The app called `resume()`.
    mutating func resume() -> ResumeAction {
        switch state {
        case .initial:
            state = .preparing(Preparing(generation: 0, suspended: false))
            return .beginLoading
        case .preparing(var preparing) where preparing.suspended:
            preparing.suspended = false
            state = .preparing(preparing)
            return .resumeDelivery(wake: nil)
        case .loading(var loading) where loading.suspended:
            loading.suspended = false
            var wake: Load? = nil
            if loading.producer == .waiting {
                loading.producer = .producing
                wake = loading.load
            }
            state = .loading(loading)
            return .resumeDelivery(wake: wake)
        case .redirecting(var redirecting) where redirecting.suspended:
            redirecting.suspended = false
            state = .redirecting(redirecting)
            return .resumeDelivery(wake: nil)
        case .finishing(var finishing) where finishing.suspended:
            // A task suspended after its load ended still has its completion queued: release it.
            finishing.suspended = false
            state = .finishing(finishing)
            return .resumeDelivery(wake: nil)
        case .preparing, .loading, .redirecting, .finishing, .handedOver, .completed:
            return .none
        }
    }

    /// The app called `suspend()`; `true` when the task was running and is now suspended. Delivery
    /// pauses by itself (``isDeliveryPaused``); a handler pauses the next time it asks
    /// ``canAcceptMoreData(generation:pendingBytes:)``.
    mutating func suspend() -> Bool {
        switch state {
        case .preparing(var preparing) where !preparing.suspended:
            preparing.suspended = true
            state = .preparing(preparing)
        case .loading(var loading) where !loading.suspended:
            loading.suspended = true
            state = .loading(loading)
        case .redirecting(var redirecting) where !redirecting.suspended:
            redirecting.suspended = true
            state = .redirecting(redirecting)
        case .finishing(var finishing) where !finishing.suspended && !finishing.cancelled:
            finishing.suspended = true
            state = .finishing(finishing)
        default:
            return false
        }
        return true
    }

    /// The app called `cancel()` (or `cancel(byProducingResumeData:)`). A task whose load already
    /// ended but whose completion has not started still ends cancelled.
    mutating func cancel() -> CancelAction {
        let stop: Load?
        let suspended: Bool
        switch state {
        case .initial:
            stop = nil
            suspended = false
        case .preparing(let preparing):
            stop = nil
            suspended = preparing.suspended
        case .loading(let loading):
            stop = loading.load
            suspended = loading.suspended
        case .redirecting(let redirecting):
            stop = redirecting.deliverable
            suspended = redirecting.suspended
        case .finishing(let finishing):
            guard !finishing.cancelled else { return .none }
            stop = nil
            suspended = finishing.suspended
        case .handedOver, .completed:
            return .none
        }
        state = .finishing(Finishing(error: nil, cancelled: true, suspended: suspended, held: nil))
        return .cancel(stop: stop)
    }

    /// The task is about to start a handler: the generation its reports will carry, or `nil` when
    /// the task moved on (cancelled) and must not start one.
    mutating func loadStarting() -> Int? {
        guard case .preparing(var preparing) = state else { return nil }
        preparing.generation += 1
        state = .preparing(preparing)
        return preparing.generation
    }

    /// The handler for `generation` exists and is about to start; `false` when the task moved on
    /// meanwhile (the handler must then not be started).
    mutating func loadStarted(_ load: Load, generation: Int) -> Bool {
        guard case .preparing(let preparing) = state, preparing.generation == generation else { return false }
        state = .loading(Loading(generation: generation, load: load, producer: .producing, disposition: .none,
                                 suspended: preparing.suspended, waitingForConnectivity: false))
        return true
    }

    /// The task delivers a cached response itself, with no handler; `false` when it moved on.
    mutating func servingWithoutHandler() -> Bool {
        guard case .preparing(let preparing) = state else { return false }
        state = .loading(Loading(generation: preparing.generation, load: nil, producer: .producing, disposition: .none,
                                 suspended: preparing.suspended, waitingForConnectivity: false))
        return true
    }

    /// The load (or the task itself, `generation == nil`) ended with `error` (`nil`: success).
    mutating func finish(error: (any Error)?, generation: Int?) -> FinishAction {
        switch route(generation) {
        case .stale: return .ignore
        case .forward(let successor): return .forward(successor)
        case .current: break
        }
        let stop: Load?
        var held: HeldBody? = nil
        var undecided: Load? = nil
        let suspended: Bool
        switch state {
        case .preparing(let preparing):
            stop = nil
            suspended = preparing.suspended
        case .loading(let loading):
            stop = loading.load
            suspended = loading.suspended
            if case .awaiting(let body) = loading.disposition {
                held = body
                undecided = loading.load
            }
        case .redirecting(let redirecting):
            stop = redirecting.deliverable
            suspended = redirecting.suspended
        case .initial, .finishing, .handedOver, .completed:
            return .ignore
        }
        state = .finishing(Finishing(error: error, cancelled: false, suspended: suspended, held: held, undecided: undecided))
        return .finish(stop: stop)
    }

    /// The pipeline starts the final step; `false` when there is none to run (not ending). A
    /// handed-over task's final step only tells the session, and the task keeps forwarding.
    mutating func completionStarted() -> Bool {
        switch state {
        case .finishing:
            state = .completed
            return true
        case .handedOver:
            return true
        case .initial, .preparing, .loading, .redirecting, .completed:
            return false
        }
    }
}

// MARK: - The events a handler reports while it loads

extension TaskStateMachine {
    /// The current load's response arrived; `asksDelegate`: a data task's delegate decides what to
    /// do with it (``Disposition/awaiting(_:)``).
    mutating func response(generation: Int?, asksDelegate: Bool) -> ResponseAction {
        switch route(generation) {
        case .stale: return .ignore
        case .forward(let successor): return .forward(successor)
        case .current: break
        }
        guard case .loading(var loading) = state else { return .ignore }
        loading.waitingForConnectivity = false
        if case .awaiting = loading.disposition {
            // Still undecided (or a download task still writing what it took over): keep what is held.
        } else {
            loading.disposition = asksDelegate ? .awaiting(HeldBody()) : .none
        }
        state = .loading(loading)
        return .accept
    }

    /// A current body chunk arrived (the task checked ``route(_:)`` first).
    mutating func body(_ chunk: Data) -> BodyAction {
        guard case .loading(var loading) = state, case .awaiting(var held) = loading.disposition else { return .pass }
        held.append(chunk)
        loading.disposition = .awaiting(held)
        state = .loading(loading)
        return .held
    }

    /// A handler asks whether it may deliver more; `pendingBytes`: body bytes queued in the pipeline
    /// and not yet delivered (held chunks are added here). A refusal records that the handler waits
    /// to be woken (by ``drained(pendingBytes:)`` or ``resume()``).
    mutating func canAcceptMoreData(generation: Int, pendingBytes: Int) -> FlowAnswer {
        switch route(generation) {
        case .stale: return .refuse
        case .forward(let successor): return .forward(successor)
        case .current: break
        }
        guard case .loading(var loading) = state else { return .refuse }
        var waiting = pendingBytes
        if case .awaiting(let held) = loading.disposition { waiting += held.bytes }
        let producer: Producer = loading.suspended || waiting > Self.highWaterBytes ? .waiting : .producing
        if loading.producer != producer {
            loading.producer = producer
            state = .loading(loading)
        }
        return producer == .producing ? .accept : .refuse
    }

    /// The pipeline delivered body bytes and `pendingBytes` remain: the load to wake, when its
    /// handler waits and little enough is left (below ``lowWaterBytes``).
    mutating func drained(pendingBytes: Int) -> Load? {
        guard case .loading(var loading) = state, loading.producer == .waiting, !loading.suspended,
              let load = loading.load else { return nil }
        var waiting = pendingBytes
        if case .awaiting(let held) = loading.disposition { waiting += held.bytes }
        guard waiting < Self.lowWaterBytes else { return nil }
        loading.producer = .producing
        state = .loading(loading)
        return load
    }

    /// The handler waits for connectivity: the idle timeout stops until the response. `true` when
    /// the report counts.
    mutating func waitingForConnectivity(generation: Int) -> Bool {
        guard isCurrent(generation), case .loading(var loading) = state else { return false }
        loading.waitingForConnectivity = true
        state = .loading(loading)
        return true
    }

    /// The current load reported a redirect. `canDeliverRefusal`: the handler can deliver the
    /// redirect response as the final result if the delegate refuses, so it is kept meanwhile.
    mutating func redirect(generation: Int, canDeliverRefusal: Bool) -> RedirectAction {
        switch route(generation) {
        case .stale: return .ignore
        case .forward(let successor): return .forward(successor)
        case .current: break
        }
        guard case .loading(let loading) = state, let load = loading.load else { return .ignore }
        state = .redirecting(Redirecting(generation: loading.generation, deliverable: canDeliverRefusal ? load : nil,
                                         suspended: loading.suspended))
        return .redirect(stop: canDeliverRefusal ? nil : load)
    }

    /// The delegate follows the redirect (or the task fails it next, with `finish`).
    mutating func redirectFollowed() -> FollowAction {
        guard case .redirecting(let redirecting) = state else { return .ignore }
        state = .preparing(Preparing(generation: redirecting.generation, suspended: redirecting.suspended))
        return .follow(stop: redirecting.deliverable)
    }

    /// The delegate refused the redirect: the redirect response becomes the result. The load the
    /// redirecting state kept delivers it and goes on being the current load; with none kept, the
    /// task delivers it itself (reports with no generation).
    mutating func redirectRefused() -> RefusalAction {
        guard case .redirecting(let redirecting) = state else { return .ignore }
        state = .loading(Loading(generation: redirecting.generation, load: redirecting.deliverable, producer: .producing,
                                 disposition: .none, suspended: redirecting.suspended, waitingForConnectivity: false))
        if let load = redirecting.deliverable { return .deliverRefusal(load) }
        return .finishWithRedirectResponse
    }
}

// MARK: - The delegate's response disposition

extension TaskStateMachine {
    /// The delegate allowed the response: the held chunks to deliver before anything queued since
    /// (empty when there are none, or the task was cancelled meanwhile).
    mutating func allow() -> [Data] {
        switch state {
        case .loading(var loading):
            guard case .awaiting(let held) = loading.disposition else { return [] }
            loading.disposition = .decided
            state = .loading(loading)
            return held.chunks
        case .finishing(var finishing):
            guard let held = finishing.held else { return [] }
            finishing.held = nil
            state = .finishing(finishing)
            return finishing.cancelled ? [] : held.chunks
        case .initial, .preparing, .redirecting, .handedOver, .completed:
            return []
        }
    }

    /// The delegate answered `.becomeDownload`: from now on this task forwards its load's reports
    /// to `successor`. `nil` when there is nothing to hand over (no disposition pending, or the
    /// task was cancelled); the successor is then not used.
    mutating func becomeDownload(_ successor: Successor) -> Handover? {
        switch state {
        case .loading(let loading):
            guard case .awaiting(let held) = loading.disposition else { return nil }
            state = .handedOver(HandedOver(successor: successor, generation: loading.generation))
            return Handover(load: loading.load, generation: loading.generation, held: held,
                            producerWaiting: loading.producer == .waiting, ended: nil)
        case .finishing(let finishing):
            guard !finishing.cancelled, let held = finishing.held else { return nil }
            state = .handedOver(HandedOver(successor: successor, generation: Self.endedGeneration))
            return Handover(load: nil, generation: Self.endedGeneration, held: held, producerWaiting: false,
                            ended: .some(finishing.error))
        case .initial, .preparing, .redirecting, .handedOver, .completed:
            return nil
        }
    }

    /// The delegate answered `.becomeStream` and the handler handed its connection over: the data
    /// task ends here without a completion of its own (Apple: no further delegate messages for it),
    /// reports of its load are stale from now on, and a later `cancel()` does nothing. Returns the
    /// body chunks held while the delegate decided (the stream reads them first) and the load to
    /// stop; `nil` when the disposition is no longer pending (cancelled, or the load ended, meanwhile).
    mutating func becameStream() -> (held: [Data], stop: Load?)? {
        guard case .loading(let loading) = state, case .awaiting(let held) = loading.disposition else { return nil }
        state = .completed
        return (held.chunks, loading.load)
    }

    /// `.becomeStream` could not be done and the load had ended already (its completion is queued
    /// behind the disposition): `true` when the task, not cancelled, must now fail instead; the
    /// held chunks are dropped.
    mutating func streamRefusedAfterEnd() -> Bool {
        guard case .finishing(var finishing) = state, !finishing.cancelled, finishing.held != nil else { return false }
        finishing.held = nil
        finishing.undecided = nil
        state = .finishing(finishing)
        return true
    }

    /// A download task takes over `handover` from the data task it continues; it is running and its
    /// first step writes the held chunks (``takeHeldBody()``). Chunks forwarded meanwhile are held
    /// behind them. `false` unless the task is still ``State/initial``.
    mutating func adopt(_ handover: Handover) -> Bool {
        guard case .initial = state else { return false }
        state = .loading(Loading(generation: handover.generation, load: handover.load,
                                 producer: handover.producerWaiting ? .waiting : .producing,
                                 disposition: .awaiting(handover.held), suspended: false, waitingForConnectivity: false))
        return true
    }

    /// Takes the chunks held so far (more may be held while they are written); once none are left
    /// the disposition is decided and a waiting handler is woken.
    mutating func takeHeldBody() -> HeldRelease {
        switch state {
        case .loading(var loading):
            guard case .awaiting(let held) = loading.disposition else { return .done(wake: nil) }
            if !held.chunks.isEmpty {
                loading.disposition = .awaiting(HeldBody())
                state = .loading(loading)
                return .chunks(held.chunks)
            }
            loading.disposition = .decided
            var wake: Load? = nil
            if loading.producer == .waiting, !loading.suspended {
                loading.producer = .producing
                wake = loading.load
            }
            state = .loading(loading)
            return .done(wake: wake)
        case .finishing(var finishing):
            guard let held = finishing.held else { return .done(wake: nil) }
            finishing.held = nil
            state = .finishing(finishing)
            return finishing.cancelled || held.chunks.isEmpty ? .done(wake: nil) : .chunks(held.chunks)
        case .initial, .preparing, .redirecting, .handedOver, .completed:
            return .done(wake: nil)
        }
    }
}
