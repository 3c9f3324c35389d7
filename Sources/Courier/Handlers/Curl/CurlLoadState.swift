import Foundation

extension CurlLoad {
    /// Where a libcurl load is: the one value that says whether a transfer runs, which one, and what
    /// the handler waits for between two attempts. ``CurlLoad`` keeps it under its lock and changes
    /// it only through the transitions below, which are pure (no locks, no libcurl, no client).
    ///
    /// ```
    /// idle ──start──▶ running ──end──▶ deciding ──▶ finished        (finish, fail)
    ///                  ▲   │                │
    ///                  │   │                ├──▶ challenging ─┐     (a challenge is presented)
    ///                  │   │                ├──▶ redirected   │     (the task decides; refused → finished)
    ///                  │   │                ├──▶ waitingForConnectivity
    ///                  │   │                └──▶ renewingBody ◀┘    (retry: a new body stream first)
    ///                  └───┴── start (expecting deciding, challenging, renewingBody, waitingForConnectivity)
    /// any state but finished ──stop──▶ stopped
    /// ```
    ///
    /// While `running`, the transfer's body may be paused: that sub-state is the load's
    /// ``CurlFlowControl`` (the write callback pauses, `resumeProducing` wakes), reset by every start.
    enum State {
        /// Nothing started yet.
        case idle
        /// A transfer is on the session's loop.
        case running(Attempt)
        /// The transfer ended (libcurl reported it); the handler decides what follows.
        case deciding
        /// The delegate is answering a challenge (authentication, server trust, client
        /// certificate, FTP login).
        case challenging
        /// The next attempt waits for the delegate's new body stream (`needNewBodyStream`).
        case renewingBody
        /// The host could not be reached; the next attempt is scheduled (`waitsForConnectivity`).
        case waitingForConnectivity
        /// A redirect was reported; the task decides. A refusal makes the 3xx the final response.
        case redirected
        /// `stopLoading()` was called: nothing more is reported, no attempt starts.
        case stopped
        /// The load's end (response, failure or finish) was reported to the client.
        case finished

        /// The state without its attempt, to name the state a transition expects.
        var stage: Stage {
            switch self {
            case .idle: .idle
            case .running: .running
            case .deciding: .deciding
            case .challenging: .challenging
            case .renewingBody: .renewingBody
            case .waitingForConnectivity: .waitingForConnectivity
            case .redirected: .redirected
            case .stopped: .stopped
            case .finished: .finished
            }
        }

        /// The running attempt, if a transfer is on the loop.
        var attempt: Attempt? {
            if case .running(let attempt) = self { return attempt }
            return nil
        }

        /// Starts `attempt` when the load is at `expected`; `false` (state unchanged) otherwise.
        mutating func start(_ attempt: Attempt, expecting expected: Stage) -> Bool {
            guard expected != .running, stage == expected else { return false }
            self = .running(attempt)
            return true
        }

        /// Stops the load (a finished load stays finished); returns the attempt that was running.
        mutating func stop() -> Attempt? {
            let running = attempt
            if stage != .finished { self = .stopped }
            return running
        }

        /// The attempt running `transfer` ended: the load goes to `deciding` and returns it. `nil`
        /// (state unchanged) when `transfer` is not the running one (the load was stopped, ended
        /// by the handler, or moved on).
        mutating func end(_ transfer: CurlTransfer) -> Attempt? {
            guard let running = attempt, running.transfer === transfer else { return nil }
            self = .deciding
            return running
        }

        /// Records that the running attempt passes its response to the client. Returns whether the
        /// response may go: while the attempt runs, or while the handler decides after its end (an
        /// empty FTP file's or listing's response comes then); not once the load was stopped or ended.
        mutating func markResponseDelivered() -> Bool {
            switch self {
            case .running(var running):
                running.responseDelivered = true
                self = .running(running)
                return true
            case .deciding:
                return true
            case .idle, .challenging, .renewingBody, .waitingForConnectivity, .redirected, .stopped, .finished:
                return false
            }
        }

        /// Moves to `next` (a waiting state, never `running`: use ``start(_:expecting:)``) when the
        /// load is at `expected`. Returns `nil` (state unchanged) otherwise, else the attempt that
        /// was running, if any (the caller takes its transfer off the loop).
        mutating func move(to next: State, from expected: Stage) -> Left? {
            guard next.stage != .running, stage == expected else { return nil }
            let left = Left(attempt: attempt)
            self = next
            return left
        }
    }

    /// What a transition away from a state left behind.
    struct Left {
        /// The attempt that was running, whose transfer must leave the loop.
        var attempt: Attempt?
    }

    /// The name of a ``State`` without its payload.
    enum Stage: Equatable, Sendable {
        case idle, running, deciding, challenging, renewingBody, waitingForConnectivity, redirected, stopped, finished
    }

    /// One attempt: a transfer on a loop, and what the load knows of it.
    struct Attempt: Sendable {
        /// The easy handle and its callbacks.
        let transfer: CurlTransfer
        /// The session's loop the transfer runs on.
        let loop: CurlMultiLoop
        /// When the attempt started (the metrics' fetch start).
        let started: Date
        /// How the attempt's metrics are read.
        let metrics: MetricsContext
        /// Whether the handler passed a response to the client during this attempt.
        var responseDelivered = false
    }

    /// What a handler tells ``CurlTransferMetrics`` about its transfers.
    struct MetricsContext: Sendable {
        /// Connections the transfer opens besides the one it talks on (an FTP passive-mode data
        /// connection), so a reused control connection still counts as reused.
        var dataConnections = 0
        /// The protocol name to report when libcurl's HTTP version says nothing (`ftp`, `ftps`).
        var protocolName: String? = nil
    }

    /// What ``CurlLoad/end(_:for:)`` tells the handler about the attempt that ended.
    struct AttemptEnd: Sendable {
        /// Whether a response was passed to the client during the attempt.
        var responseDelivered: Bool
    }
}
