import Foundation

// Resume, suspend and cancel: the transitions of a task's public state.
extension URLSessionTask {
    func resumeTask() {
        // A task made with `init()` belongs to no session: resuming it does nothing.
        guard session != nil else { return }
        enum Action { case none, start, unpause(ActiveLoad?) }
        let action: Action = lock.withLock {
            guard core.state == .suspended else { return .none }
            switch core.phase {
            case .idle:
                core.state = .running
                core.phase = .preparing
                core.loadStarted = monotonicNanoseconds()
                core.lastActivity = core.loadStarted
                core.metrics.taskStarted()
                return .start
            case .done:
                return .none
            case .preparing, .finishing:
                // A task suspended after its handler ended still has its completion queued: resuming
                // must release it.
                core.state = .running
                return .unpause(nil)
            case .loading(let load):
                core.state = .running
                core.lastActivity = monotonicNanoseconds()
                let wasWaiting = core.producerWaiting
                core.producerWaiting = false
                return .unpause(wasWaiting ? load : nil)
            }
        }
        switch action {
        case .none:
            return
        case .start:
            pipeline?.setPaused(false)
            beginLoading()
        case .unpause(let load):
            pipeline?.setPaused(false)
            load?.resumeProducing()
        }
    }

    func suspendTask() {
        let suspended: Bool = lock.withLock {
            guard core.state == .running else { return false }
            core.state = .suspended
            return true
        }
        if suspended { pipeline?.setPaused(true) }
    }

    func cancelTask(producingResumeData resumeHandler: UncheckedSendable<(Data?) -> Void>?) {
        let (didCancel, load): (Bool, ActiveLoad?) = lock.withLock {
            switch core.phase {
            case .done:
                return (false, nil)
            case .finishing:
                // The handler ended but the completion is not delivered yet: cancelling still wins,
                // as long as it was not already cancelled.
                guard core.state != .canceling else { return (false, nil) }
                core.state = .canceling
                core.keepPartialFile = resumeHandler != nil
                return (true, nil)
            case .idle, .preparing:
                core.phase = .finishing
                core.state = .canceling
                return (true, nil)
            case .loading(let load):
                core.phase = .finishing
                core.state = .canceling
                core.keepPartialFile = resumeHandler != nil
                return (true, load)
            }
        }
        guard didCancel, let pipeline else {
            // Already finishing: cancel changes nothing, but resume data is still owed to the caller.
            if let resumeHandler, let queue = session?.delegateQueue {
                queue.addOperation { resumeHandler.value(nil) }
            }
            return
        }
        load?.stop()
        let url = lock.withLock { core.currentRequest?.url ?? initialRequest?.url }
        let cancelled = URLError(.cancelled, url: url, description: "The task was cancelled.")
        let replaced = pipeline.replaceRemaining { [self] in
            let resumeData = resumeHandler != nil ? makeResumeData() : nil
            resumeHandler?.value(resumeData)
            deliverCompletion(error: resumeData.map { cancelled.addingResumeData($0) } ?? cancelled)
        }
        if !replaced, let resumeHandler, let queue = session?.delegateQueue {
            queue.addOperation { resumeHandler.value(nil) }
        }
        session?.taskWillComplete(self)
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
