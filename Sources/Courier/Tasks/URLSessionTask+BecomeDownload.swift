import Foundation

// The response dispositions that continue a data task: `.allow` releases the body held while the
// delegate decided, `.becomeDownload` hands the load over to a new download task.
extension URLSessionTask {
    /// Delivers the chunks held during the response disposition, in order, right after the
    /// disposition (ahead of anything queued meanwhile, such as the completion or `willCacheResponse`),
    /// and stops holding. Called while the disposition step still holds the pipeline.
    func releaseHeldBody() {
        guard let session, let pipeline, let dataTask = self as? URLSessionDataTask else { return }
        lock.withLock {
            defer { core.heldBody = nil }
            guard core.state != .canceling, let held = core.heldBody else { return }
            // Inserted under the lock, so a chunk arriving now (enqueued at the end) comes after them.
            pipeline.insertNext(held.map { chunk in
                (bytes: chunk.count, run: { [self] in
                    sendToDelegate(.data, as: (any URLSessionDataDelegate).self) {
                        $0.urlSession(session, dataTask: dataTask, didReceive: chunk)
                    }
                })
            })
        }
        pipelineDrained(pendingBytes: pipeline.bytesPending)
    }

    /// `.becomeDownload`: a new download task takes over the running load (same handler, same
    /// connection). The delegate hears `didBecome downloadTask`; from then on everything goes to the
    /// download task, and this data task ends without a completion of its own, as Apple documents.
    func becomeDownload(after response: URLResponse) {
        guard let session, let pipeline, let dataTask = self as? URLSessionDataTask else { return }
        let successor = session.makeSuccessorDownloadTask(for: initialRequest)
        enum Handover { case refused, running, ended((any Error)?) }
        let handover: Handover = lock.withLock {
            let running: ActiveLoad?
            let client: TaskProtocolClient?
            switch core.phase {
            case .loading(let load):
                guard let loadClient = load.instance.client as? TaskProtocolClient else { return .refused }
                client = loadClient
                running = load
            case .finishing where core.state != .canceling:
                client = nil
                running = nil
            default:
                return .refused
            }
            successor.adopt(running, request: core.currentRequest, response: response,
                            expectedLength: core.bytesExpectedToReceive,
                            requestTimeout: core.requestTimeout, resourceTimeout: core.resourceTimeout,
                            delegate: core.delegate)
            // Written under this lock so a chunk the handler is reporting right now (forwarded by
            // `handleData`) lands after them. The handler reports to the successor directly only
            // once they are written: retargeted earlier, its next chunk could be written while the
            // held ones still are, and the two writes would race for the file's end.
            for chunk in core.heldBody ?? [] { successor.handleData(chunk, generation: running?.generation) }
            core.heldBody = nil
            client?.retarget(to: successor)
            let outcome: Handover = running == nil ? .ended(core.completionError) : .running
            core.successor = successor
            core.phase = .done
            core.state = .completed
            return outcome
        }
        switch handover {
        case .refused:
            successor.cancel()
            return
        case .running:
            lock.withLock { () -> ActiveLoad? in
                guard case .loading(let load)? = Optional(successor.lock.withLock { successor.core.phase }) else { return nil }
                return load
            }?.resumeProducing()
        case .ended(let error):
            // The load had already ended: the download task ends the same way.
            successor.complete(error: error, generation: nil)
        }
        sendToDelegate(.becameDownload, as: (any URLSessionDataDelegate).self) {
            $0.urlSession(session, dataTask: dataTask, didBecome: successor)
        }
        lock.withLock { core.delegate = nil }
        pipeline.replaceRemaining { [self] in session.taskDidComplete(self) }
    }

    /// Takes over a load started by a data task (see `becomeDownload(after:)`); `load` is `nil` when
    /// it already ended.
    func adopt(_ load: ActiveLoad?, request: URLRequest?, response: URLResponse, expectedLength: Int64,
               requestTimeout: UInt64, resourceTimeout: UInt64, delegate: (any URLSessionTaskDelegate)?) {
        lock.withLock {
            let now = monotonicNanoseconds()
            core.state = .running
            if let load {
                core.phase = .loading(load)
                core.generation = load.generation
            } else {
                core.phase = .preparing
            }
            core.currentRequest = request
            core.response = response
            core.bytesExpectedToReceive = expectedLength
            core.loadStarted = now
            core.lastActivity = now
            core.requestTimeout = requestTimeout
            core.resourceTimeout = resourceTimeout
            core.delegate = delegate
            core.metrics.taskStarted()
            if let request { core.metrics.loadStarted(request: request) }
            core.metrics.responseReceived(response)
        }
        session?.taskDidStartLoading(self)
    }
}
