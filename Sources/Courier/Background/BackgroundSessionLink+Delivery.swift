import Foundation

/// One thing a background session delivers to its delegate, in order.
enum BackgroundDelivery: @unchecked Sendable {
    // `@unchecked Sendable`: the task is itself `Sendable` (`@unchecked`, Apple's interface).
    /// An event from the agent.
    case event(AgentEvent)
    /// A completion decided in this process (never resumed, or the agent unreachable).
    case local(task: URLSessionTask, completion: AgentCompletion)
}

extension BackgroundSessionLink.LinkState {
    /// Claims the drain when there is something to deliver and nobody drains: `true` when the
    /// caller must schedule it.
    mutating func claimDrain() -> Bool {
        guard !draining, !adopting, !deliveries.isEmpty, session != nil else { return false }
        draining = true
        return true
    }
}

// Delivering the agent's events to the delegate: one drain at a time on the delegate queue, in
// the order they arrived; each stored event is acknowledged once its delegate calls returned, so
// the agent forgets it only then (a crash in between delivers it again, never loses it).
extension BackgroundSessionLink {
    /// Queues a delivery (on the reader thread of `client`, or the app's). A stored event taken
    /// before is skipped; when it was delivered already, its acknowledgement (lost with an earlier
    /// connection) is sent again on `client`.
    func received(_ delivery: BackgroundDelivery, via client: BackgroundAgentClient? = nil) {
        let (schedule, acknowledgeAgain) = state.withLock { link -> (Bool, Int64?) in
            if case .event(let event) = delivery, event.sequence > 0 {
                guard event.sequence > link.lastSequence else {
                    return (false, event.sequence <= link.lastDelivered ? event.sequence : nil)
                }
                link.lastSequence = event.sequence
            }
            link.deliveries.append(delivery)
            return (link.claimDrain(), nil)
        }
        if let acknowledgeAgain { client?.post(.acknowledge(sequence: acknowledgeAgain)) }
        if schedule { scheduleDrain() }
    }

    /// Runs the drain on the session's delegate queue.
    func scheduleDrain() {
        guard let session = state.withLock({ $0.session }) else { return }
        session.delegateQueue.addOperation { [self] in drain(session) }
    }

    private func drain(_ session: URLSession) {
        while true {
            let next: BackgroundDelivery? = state.withLock { link in
                guard !link.deliveries.isEmpty else {
                    link.draining = false
                    return nil
                }
                return link.deliveries.removeFirst()
            }
            guard let next else { return }
            switch next {
            case .event(let event):
                deliver(event, session)
                if event.sequence > 0 {
                    state.withLock { link in
                        link.lastDelivered = max(link.lastDelivered, event.sequence)
                        return link.client
                    }?.post(.acknowledge(sequence: event.sequence))
                }
            case .local(let task, let completion):
                if let link = Self.link(of: task) { complete(task, link, completion, session) }
            }
        }
    }

    private func deliver(_ event: AgentEvent, _ session: URLSession) {
        if case .allDelivered = event.kind {
            session.delegate?.urlSessionDidFinishEvents(forBackgroundURLSession: session)
            return
        }
        guard let task = session.lock.withLock({ session.registry.tasks[event.taskID] }), let link = Self.link(of: task) else {
            // A task this session never had (its completion was delivered already): drop the file;
            // a question gets the default answer.
            switch event.kind {
            case .completed(let completion):
                if let file = completion.file { unlink(file) }
            case .question(let id, let question):
                state.withLock { $0.client }?.post(.answer(question: id, question.defaultAnswer))
            case .progress, .allDelivered:
                break
            }
            return
        }
        switch event.kind {
        case .progress(let written, let total, let expected):
            let live = link.update { state -> Bool in
                guard state.phase != .completed else { return false }
                state.counts.received = total
                state.counts.expectedToReceive = expected
                return true
            }
            guard live, let download = task as? URLSessionDownloadTask else { return }
            task.sendToDelegate(.wroteData, as: (any URLSessionDownloadDelegate).self) {
                $0.urlSession(session, downloadTask: download, didWriteData: written, totalBytesWritten: total,
                              totalBytesExpectedToWrite: expected)
            }
        case .completed(let completion):
            complete(task, link, completion, session)
        case .question(let id, let question):
            answer(question, id: id, task: task, session)
        case .allDelivered:
            return
        }
    }

    /// Delivers a task's end: the downloaded file (moved out of the agent's directory first, and
    /// removed when the delegate returns), an upload's response body, then `didCompleteWithError`.
    private func complete(_ task: URLSessionTask, _ link: BackgroundTaskLink, _ completion: AgentCompletion, _ session: URLSession) {
        let url = task.originalRequest?.url
        let error = completion.error.map { record in completion.resumeData.map { record.urlError.addingResumeData($0) } ?? record.urlError }
        let (first, handler) = link.update { state -> (Bool, UncheckedSendable<(Data?) -> Void>?) in
            let handler = state.resumeDataHandler
            state.resumeDataHandler = nil
            guard state.phase != .completed else { return (false, handler) }
            state.phase = .completed
            state.counts = completion.counts
            if let response = completion.response?.urlResponse() { state.response = response }
            state.error = error
            return (true, handler)
        }
        // `cancel(byProducingResumeData:)`'s handler, before `didCompleteWithError`.
        handler?.value(first ? completion.resumeData : nil)
        guard first else {
            if let file = completion.file { unlink(file) }
            return
        }
        var finalError: URLError? = error
        if error == nil, let download = task as? URLSessionDownloadTask {
            do {
                let location = try BackgroundFileHandoff.take(completion.file, session: identifier, task: task.taskIdentifier, url: url)
                task.sendToDelegate(.finishedDownloading, as: (any URLSessionDownloadDelegate).self) {
                    $0.urlSession(session, downloadTask: download, didFinishDownloadingTo: location)
                }
                unlink(location.path)
            } catch {
                finalError = error
                link.update { $0.error = error }
            }
        }
        if error == nil, let body = completion.body, !body.isEmpty, let dataTask = task as? URLSessionDataTask {
            task.sendToDelegate(.data, as: (any URLSessionDataDelegate).self) {
                $0.urlSession(session, dataTask: dataTask, didReceive: body)
            }
        }
        task.sendToDelegate(.completion, as: (any URLSessionTaskDelegate).self) {
            $0.urlSession(session, task: task, didCompleteWithError: finalError)
        }
        task.lock.withLock { task.core.delegate = nil }
        session.taskDidComplete(task)
    }
}
