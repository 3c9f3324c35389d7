import Foundation

// The response dispositions that continue a data task: `.allow` releases the body held while the
// delegate decided, `.becomeDownload` hands the load over to a new download task.
extension URLSessionTask {
    /// Delivers the chunks held during the response disposition, in order, right after the
    /// disposition (ahead of anything queued meanwhile, such as the completion or `willCacheResponse`),
    /// and stops holding. Called while the disposition step still holds the queue; a handler that
    /// waits because of the held bytes is woken once few enough remain.
    func releaseHeldBody() {
        let (schedule, wake): (Bool, ActiveLoad?) = lock.withLock {
            let held = core.machine.allow()
            let steps = held.compactMap { chunk in makeDataStep(chunk).map { (bytes: chunk.count, run: $0) } }
            let schedule = core.events.insertNext(steps, paused: core.machine.isDeliveryPaused)
            return (schedule, core.machine.drained(pendingBytes: core.waitingBodyBytes))
        }
        wake?.resumeProducing()
        if schedule { scheduleDrain() }
    }

    /// `.becomeDownload`: a new download task takes over the running load (same handler, same
    /// connection) and the chunks held meanwhile. The delegate hears `didBecome downloadTask`; from
    /// then on this data task's state machine forwards every report of the load to the download task
    /// (the one retargeting mechanism), and the data task ends without a completion of its own, as
    /// Apple documents.
    func becomeDownload(after response: URLResponse) {
        guard let session, let context, let dataTask = self as? URLSessionDataTask else { return }
        let successor = context.owner.makeSuccessorDownloadTask(for: initialRequest)
        enum Outcome { case refused, handedOver(ended: (any Error)??, successorSchedule: Bool, ownSchedule: Bool) }
        let outcome: Outcome = lock.withLock {
            guard let handover = core.machine.becomeDownload(successor) else { return .refused }
            // The successor adopts under this lock (a data task's lock before its successor's): a
            // report forwarded as soon as the lock is released finds it loading, and chunks it gets
            // before the held ones are written wait behind them.
            let successorSchedule = successor.adopt(handover, request: core.currentRequest, response: response,
                                                    expectedLength: core.bytesExpectedToReceive,
                                                    requestTimeout: core.requestTimeout, resourceTimeout: core.resourceTimeout,
                                                    delegate: core.delegate)
            let final: @Sendable () -> Void = { [self] in context.owner.taskDidComplete(self) }
            let ownSchedule = core.events.replaceAll(withFinal: final, paused: core.machine.isDeliveryPaused)
            return .handedOver(ended: handover.ended, successorSchedule: successorSchedule, ownSchedule: ownSchedule)
        }
        guard case .handedOver(let ended, let successorSchedule, let ownSchedule) = outcome else {
            successor.cancel()
            return
        }
        if ended == nil { context.owner.taskDidStartLoading(successor) }
        sendToDelegate(.becameDownload, as: (any URLSessionDataDelegate).self) {
            $0.urlSession(session, dataTask: dataTask, didBecome: successor)
        }
        lock.withLock { core.delegate = nil }
        if successorSchedule { successor.scheduleDrain() }
        if ownSchedule { scheduleDrain() }
    }

    /// Takes over a load started by a data task (see `becomeDownload(after:)`), under the data
    /// task's lock. The first step writes the held chunks; when the load had already ended, the
    /// task then ends the same way. Returns whether a drain must be scheduled.
    func adopt(_ handover: Machine.Handover, request: URLRequest?, response: URLResponse, expectedLength: Int64,
               requestTimeout: UInt64, resourceTimeout: UInt64, delegate: (any URLSessionTaskDelegate)?) -> Bool {
        // How the load ended, if it had: errors are not `Sendable`, but this one is only read here.
        let ended = UncheckedSendable(handover.ended)
        let flush: @Sendable () -> Void = { [self] in
            guard writeHeldBody() else { return }
            if case .some(let error) = ended.value { complete(error: error, generation: nil) }
        }
        return lock.withLock {
            guard core.machine.adopt(handover) else { return false }
            let now = monotonicNanoseconds()
            core.currentRequest = request
            core.response = response
            core.bytesExpectedToReceive = expectedLength
            core.bytesReceived = Int64(handover.held.bytes)
            core.loadStarted = now
            core.lastActivity = now
            core.requestTimeout = requestTimeout
            core.resourceTimeout = resourceTimeout
            core.delegate = delegate
            core.metrics.taskStarted()
            if let request { core.metrics.loadStarted(request: request) }
            core.metrics.responseReceived(response)
            return core.events.append(.immediate(flush, bytes: 0), paused: core.machine.isDeliveryPaused)
        }
    }

    /// Writes the chunks a download task took over, and those forwarded while it does, in order;
    /// then chunks are written as they arrive. `false` when a write failed (the task failed).
    private func writeHeldBody() -> Bool {
        let url = currentRequest?.url
        while true {
            switch lock.withLock({ core.machine.takeHeldBody() }) {
            case .chunks(let chunks):
                for chunk in chunks where !writeBody(chunk, to: nil, url: url, generation: nil) {
                    return false
                }
            case .done(let wake):
                wake?.resumeProducing()
                return true
            }
        }
    }
}
