internal import CCurl
import Foundation
import Logging
import Synchronization

/// A handler that runs its load on libcurl through a ``CurlLoad``: the `URLProtocol` whose client
/// hears the reports, and the delegate of its transfers (``CurlLoadHandler``).
typealias CurlLoadOwner = URLProtocol & CurlLoadHandler

/// The attempt plumbing of one libcurl load, shared by the http(s) and ftp(s) handlers: one per
/// handler instance, living through the load's attempts (a retry after a challenge, a fallback, a
/// wait for connectivity are new attempts of the same load).
///
/// It owns what every attempt does the same way: making the transfer from an easy handle (pooled for
/// http) and starting it on the session's ``CurlMultiLoop``; back-pressure (``deliverBody(_:to:)``
/// pauses libcurl while the client cannot take more, ``resumeProducing()`` wakes it, through
/// ``CurlFlowControl``, which loses no wake-up); upload progress; stopping, from any thread and at any
/// time (also before ``start(expecting:for:environment:metrics:configure:)`` returned); the end of an
/// attempt with its metrics; the end of the load, reported once; and the retry with a fresh attempt,
/// asking the delegate for a new body stream first when the body was one. The handler keeps what is
/// its own (HTTP: heads, redirects, authentication, cookies, caching; FTP: login, listings, resume)
/// and decides what follows an attempt.
///
/// Where the load is is one ``State`` value under ``lock``. The handler names the state it expects
/// in each transition (a challenge's answer after a stop finds `stopped` and does nothing), so a
/// late callback, a timer or a delegate's answer never starts or ends a load twice.
///
/// Threads: `start`, `stop`, `resumeProducing` and the transitions run on whatever thread calls them
/// (the task's, a delegate queue, a global queue for timers); the body, upload and end reports on the
/// thread that drives the loop (``CurlMultiLoop``). No lock is held while calling the client or the
/// loop; ``lock`` takes no other lock but the flow-control and upload-progress leaves (when an
/// attempt starts).
final class CurlLoad: @unchecked Sendable {
    /// Guards ``state`` and ``uploadProgress``.
    private let lock = Lock()
    /// Touched under ``lock`` only, so the runtime's exclusivity check per access adds nothing.
    @exclusivity(unchecked) private var state = State.idle
    /// Upload bytes the client heard of in the current attempt.
    private var uploadProgress = CurlUploadProgress()
    /// The pause of the running attempt's body (a sub-state of `running`), reset by each start.
    private let flowControl = CurlFlowControl()
    /// Body bytes of the current attempt handed to the client (after content decoding), for the
    /// metrics. Counted on the loop thread, reset by each start.
    private let deliveredBytes = Atomic<Int64>(0)
    /// What the header callback reads: HTTP heads or FTP replies.
    private let headerMode: CurlTransfer.HeaderMode
    /// Whether easy handles come from the loop's pool (http: every transfer asks for the same receive
    /// buffer size).
    private let pooled: Bool

    init(headerMode: CurlTransfer.HeaderMode, pooled: Bool) {
        self.headerMode = headerMode
        self.pooled = pooled
    }

    /// Where the load is now (it may change as soon as this returns).
    var stage: Stage { lock.withLock { state.stage } }

    // MARK: Attempts

    /// Starts an attempt when the load is at `expected`: makes the transfer, lets `configure` set its
    /// options (the handler's own: URL, method, body, credentials…), and adds it to the session's
    /// loop, which may run it on this thread at once. Returns whether it started. When libcurl or the
    /// loop cannot be had, or `configure` throws, the load fails with that error (if still at
    /// `expected`). When the load left `expected` meanwhile (a stop), nothing starts.
    @discardableResult
    func start(expecting expected: Stage, for owner: any CurlLoadOwner, environment: HandlerEnvironment,
               metrics: MetricsContext = MetricsContext(),
               configure: (CurlTransfer) throws(URLError) -> Void) -> Bool {
        guard let loop = CurlMultiLoop.shared(in: environment),
              let transfer = CurlTransfer(delegate: owner, headerMode: headerMode, pool: pooled ? loop.httpHandles : nil) else {
            fail(URLError(.cannotLoadFromNetwork, url: owner.request.url,
                          description: "libcurl could not be initialised, or the session was invalidated."),
                 for: owner, from: expected)
            return false
        }
        do {
            try configure(transfer)
        } catch {
            fail(error, for: owner, from: expected)
            return false
        }
        // At `info` and above this is one level check per attempt: nothing else runs.
        if CourierLogging.emits(.debug, environment.logger) {
            let logger = owner.builtInClient?.configuration.logger ?? environment.logger
            transfer.logger = logger
            CurlWireTrace.attach(to: transfer, logger: logger, logsSecrets: environment.logsSecrets)
        }
        let attempt = Attempt(transfer: transfer, loop: loop, started: Date(), metrics: metrics)
        let started: Bool = lock.withLock {
            guard state.start(attempt, expecting: expected) else { return false }
            // Only once the transition is made: a start that lost a race must not reset a running
            // attempt's pause. (The flow control's leaf lock nests inside this one.)
            uploadProgress.reset()
            flowControl.reset()
            deliveredBytes.store(0, ordering: .relaxed)
            return true
        }
        // Outside the lock: the loop may drive libcurl here, and its callbacks come back to us.
        if started { loop.add(transfer) }
        return started
    }

    /// Stops the load: the running transfer is abandoned (its next callback aborts it) and taken off
    /// the loop, and nothing more is reported. Idempotent; safe from any thread, also while a
    /// callback runs or before ``start(expecting:for:environment:metrics:configure:)`` returned (an
    /// attempt that had not started yet does not start).
    func stop() {
        guard let attempt = lock.withLock({ state.stop() }) else { return }
        attempt.transfer.abandon()
        attempt.loop.remove(attempt.transfer)
    }

    /// The client can take more: unpauses the running transfer if its body is paused (on the loop
    /// thread), or remembers the wake-up for a write callback that is deciding to pause.
    func resumeProducing() {
        guard flowControl.wake(), let attempt = lock.withLock({ state.attempt }) else { return }
        attempt.loop.unpause(attempt.transfer)
    }

    // MARK: Reports of the running attempt (loop thread)

    /// Hands body bytes to the client, unless it cannot take more now: then `false`, and the write
    /// callback pauses libcurl (which hands the same bytes again once woken).
    func deliverBody(_ bytes: UnsafeRawBufferPointer, to owner: any CurlLoadOwner) -> Bool {
        guard mayDeliver(to: owner) else { return false }
        deliver(Data(bytes), to: owner)
        return true
    }

    /// Whether body may go to the client now; `false`: pause (see ``deliverBody(_:to:)``).
    func mayDeliver(to owner: any CurlLoadOwner) -> Bool {
        !flowControl.shouldPause(for: owner.builtInClient)
    }

    /// Hands `body` to the client, counting it for the metrics.
    func deliver(_ body: Data, to owner: any CurlLoadOwner) {
        _ = deliveredBytes.wrappingAdd(Int64(body.count), ordering: .relaxed)
        owner.client?.urlProtocol(owner, didLoad: body)
    }

    /// The running attempt's transfer and loop, if an attempt runs.
    var running: (transfer: CurlTransfer, loop: CurlMultiLoop)? {
        lock.withLock { state.attempt.map { ($0.transfer, $0.loop) } }
    }

    /// Whether the running attempt passed a response to the client.
    var responseDelivered: Bool {
        lock.withLock { state.attempt?.responseDelivered ?? false }
    }

    /// Passes the running attempt's response to the client, unless the load no longer runs it (a
    /// stop while the head was read).
    func respond(with response: URLResponse, policy: URLCache.StoragePolicy, to owner: any CurlLoadOwner) {
        guard lock.withLock({ state.markResponseDelivered() }) else { return }
        owner.client?.urlProtocol(owner, didReceive: response, cacheStoragePolicy: policy)
    }

    /// Reports upload progress (libcurl's running total) to the client, each step once.
    func reportUpload(totalBytesSent: Int64, expected: Int64, to owner: any CurlLoadOwner) {
        let delta = lock.withLock { uploadProgress.advance(to: totalBytesSent) }
        CurlUploadProgress.report(delta, totalBytesSent: totalBytesSent, expected: expected, to: owner.client)
    }

    /// libcurl reported the end of `transfer`: when it is the running attempt's, the load goes to
    /// `deciding`, the attempt's metrics go to the task, and the handler learns what it needs to
    /// decide. `nil` when the load is no longer running it (stopped, or ended by the handler).
    func end(_ transfer: CurlTransfer, for owner: any CurlLoadOwner) -> AttemptEnd? {
        guard let attempt = lock.withLock({ state.end(transfer) }) else { return nil }
        reportMetrics(of: attempt, to: owner)
        return AttemptEnd(responseDelivered: attempt.responseDelivered)
    }

    /// Sends what libcurl measured (and the decoded body size) to the task's metrics.
    private func reportMetrics(of attempt: Attempt, to owner: any CurlLoadOwner) {
        guard let builtIn = owner.builtInClient else { return }
        let measured = CurlTransferMetrics(attempt.transfer, started: attempt.started,
                                           dataConnections: attempt.metrics.dataConnections,
                                           protocolName: attempt.metrics.protocolName)
        if let logger = attempt.transfer.logger { measured.logConnection(to: logger, url: attempt.transfer.effectiveURL) }
        let decoded = deliveredBytes.load(ordering: .relaxed)
        builtIn.didCollectTransactionMetrics {
            measured.apply(to: &$0)
            $0.countOfResponseBodyBytesAfterDecoding = decoded
        }
    }

    // MARK: Between attempts

    /// Moves the load from `expected` to a waiting `next` state (`challenging`, `redirected`,
    /// `waitingForConnectivity`…). Returns whether it did; a running transfer leaves the loop.
    @discardableResult
    func wait(_ next: State, from expected: Stage) -> Bool {
        move(to: next, from: expected)
    }

    /// Retries with a fresh attempt, from `expected`: when the request's body is a stream (used by
    /// the attempt before), the delegate is asked for a new one first (`renewingBody`), and the load
    /// fails if it gives none. Then `start` is called with the stream to send (`nil`: the request's
    /// own body); it starts the attempt expecting `renewingBody`.
    func retry(from expected: Stage, for owner: any CurlLoadOwner,
               start: @escaping @Sendable (_ bodyStream: InputStream?) -> Void) {
        guard move(to: .renewingBody, from: expected) else { return }
        let request = owner.request
        CurlBodyStreamRetry.prepare(for: request, client: owner.client, proceed: start, fail: { [weak self, weak owner] error in
            guard let self, let owner else { return }
            fail(error, for: owner, from: .renewingBody)
        })
    }

    // MARK: The end of the load

    /// Ends the load from `expected` (a running transfer leaves the loop). Returns whether it did:
    /// then, and only then, the caller reports the end (a response, a failure, a finish).
    func conclude(from expected: Stage) -> Bool {
        move(to: .finished, from: expected)
    }

    /// Ends the load from `expected` and reports that it finished.
    func finish(for owner: any CurlLoadOwner, from expected: Stage) {
        guard move(to: .finished, from: expected) else { return }
        owner.client?.urlProtocolDidFinishLoading(owner)
    }

    /// Ends the load from `expected` and reports `error` (which carries the failing URL).
    func fail(_ error: URLError, for owner: any CurlLoadOwner, from expected: Stage) {
        guard move(to: .finished, from: expected) else { return }
        owner.client?.urlProtocol(owner, didFailWithError: error)
    }

    /// The transition behind ``wait(_:from:)``, ``conclude(from:)``, ``finish(for:from:)`` and
    /// ``fail(_:for:from:)``: a transfer that was running is abandoned and taken off the loop.
    private func move(to next: State, from expected: Stage) -> Bool {
        guard let left = lock.withLock({ state.move(to: next, from: expected) }) else { return false }
        if let attempt = left.attempt {
            attempt.transfer.abandon()
            attempt.loop.remove(attempt.transfer)
        }
        return true
    }
}
