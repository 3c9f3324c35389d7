import Foundation

// Resume, suspend and cancel: the app's events for the task's state machine.
extension URLSessionTask {
    func resumeTask() {
        // A task made with `init()` belongs to no session: resuming it does nothing.
        guard context != nil else { return }
        let (action, schedule): (Machine.ResumeAction, Bool) = lock.withLock {
            let action = core.machine.resume()
            switch action {
            case .none:
                return (action, false)
            case .beginLoading:
                core.loadStarted = monotonicNanoseconds()
                core.lastActivity = core.loadStarted
                core.metrics.taskStarted()
            case .resumeDelivery:
                core.lastActivity = monotonicNanoseconds()
            }
            return (action, core.events.kick(paused: core.machine.isDeliveryPaused))
        }
        if schedule { scheduleDrain() }
        if case .none = action {} else { log(.resumed) }
        switch action {
        case .none:
            return
        case .beginLoading:
            beginLoading()
        case .resumeDelivery(let wake):
            wake?.resumeProducing()
        }
    }

    /// Delivery pauses by itself (the drain reads the machine); a flow-controlled handler pauses the
    /// next time it asks `canAcceptMoreData`.
    func suspendTask() {
        if lock.withLock({ core.machine.suspend() }) { log(.suspended) }
    }

    func cancelTask(producingResumeData resumeHandler: UncheckedSendable<(Data?) -> Void>?) {
        let final: @Sendable () -> Void = { [self] in
            let url = currentRequest?.url ?? initialRequest?.url
            let cancelled = URLError(.cancelled, url: url, description: "The task was cancelled.")
            let resumeData = resumeHandler != nil ? makeResumeData() : nil
            resumeHandler?.value(resumeData)
            deliverCompletion(error: resumeData.map { cancelled.addingResumeData($0) } ?? cancelled, keepFile: resumeData != nil,
                              reportsWrites: false)
        }
        let (action, schedule): (Machine.CancelAction, Bool) = lock.withLock {
            let action = core.machine.cancel()
            guard case .cancel = action else { return (action, false) }
            // Everything not yet delivered is dropped: the cancelled completion comes next.
            return (action, core.events.replaceAll(withFinal: final, paused: core.machine.isDeliveryPaused))
        }
        guard case .cancel(let stop) = action else {
            // Already cancelled or completed: resume data is still owed to the caller.
            if let resumeHandler, let queue = context?.delegateQueue {
                queue.addOperation { resumeHandler.value(nil) }
            }
            return
        }
        log(.cancelled)
        stop?.stop()
        if schedule { scheduleDrain() }
        didDecideCompletion(error: URLError(.cancelled, url: currentRequest?.url ?? initialRequest?.url,
                                            description: "The task was cancelled."))
    }
}

extension ActiveLoad {
    /// Tells the handler to stop, on its queue (directly for ``HandlerCapabilities/concurrentStartStop``).
    func stop() { performDirectlyIfConcurrent { $0.stopLoading() } }

    /// Tells a flow-controlled handler (``HandlerCapabilities/flowControl``) it may produce again.
    func resumeProducing() {
        guard handler.capabilities.contains(.flowControl) else { return }
        performDirectlyIfConcurrent { [self] _ in operations?.resumeProducing() }
    }

    /// Tells a handler that keeps a refused redirect (``HandlerCapabilities/deliversRefusedRedirect``)
    /// to deliver it as the result, on its queue.
    func deliverRefusedRedirect() {
        guard handler.capabilities.contains(.deliversRefusedRedirect) else { return }
        perform { [self] _ in operations?.deliverRefusedRedirect() }
    }
}

extension URLError {
    /// This error with resume data in its user info, for `downloadTaskResumeData`.
    func addingResumeData(_ data: Data) -> URLError {
        var info = userInfo
        info[URLSessionDownloadTaskResumeData] = data
        return URLError(code, userInfo: info)
    }
}
