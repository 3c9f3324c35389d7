import Foundation

// What handlers report, turned into task state and pipeline steps. `generation` names the handler
// instance reporting; `nil` means the task itself (a refused redirect, a failure before loading).
extension URLSessionTask {
    /// High-water mark of undelivered body bytes before a flow-controlled handler is paused.
    static var highWaterBytes: Int { Machine.highWaterBytes }
    /// Low-water mark at which a paused handler is resumed.
    static var lowWaterBytes: Int { Machine.lowWaterBytes }

    /// Whether reports from `generation` still count. Call with the lock held.
    func isCurrentLocked(_ generation: Int?) -> Bool {
        core.machine.isCurrent(generation)
    }

    /// `storagePolicy` is where the handler allows the response to be cached (see
    /// `URLSessionTask+Caching.swift`).
    func handleResponse(_ response: URLResponse, storagePolicy: URLCache.StoragePolicy = .notAllowed, generation: Int?) {
        let asksDelegate = bodyDestination == .delegate
        // Built before locking, queued in the same critical section as the state change.
        let disposition = asksDelegate ? makeDispositionStep(for: response) : nil
        enum Outcome { case ignore, forward(URLSessionDownloadTask), accepted(schedule: Bool), refused(URLError) }
        let outcome: Outcome = lock.withLock {
            // A body announced over the limit fails now, before a byte of it is read (and before
            // the delegate is asked about a response whose body it would never get).
            let refusal = ResponseBodyLimit.refusal(of: response, limit: core.bodyLimit)
            switch core.machine.response(generation: generation, asksDelegate: disposition != nil && refusal == nil) {
            case .ignore: return .ignore
            case .forward(let successor): return .forward(successor)
            case .accept: break
            }
            core.response = response
            if let refusal { return .refused(refusal) }
            core.lastActivity = monotonicNanoseconds()
            core.metrics.responseReceived(response)
            beginCacheCopyLocked(for: response, policy: storagePolicy)
            if bodyDestination == .file, core.resumedAtOffset == nil, let file = core.downloadFile, file.bytesAccepted > 0 {
                // The handler did not resume: start the file over rather than splice two versions.
                file.truncate()
                core.bytesReceived = 0
                core.writeReports.restart(at: 0)
            }
            if core.resumedAtOffset == nil {
                core.bytesExpectedToReceive = response.expectedContentLength
            }
            if bodyDestination == .memory, response.expectedContentLength > 0,
               response.expectedContentLength <= Int64(Int32.max) {
                core.body.reserveCapacity(Int(response.expectedContentLength))
            }
            if let progress = core.progress, core.bytesExpectedToReceive >= 0 {
                progress.totalUnitCount = core.bytesExpectedToReceive
            }
            return .accepted(schedule: disposition.map { enqueueLocked(.awaiting($0)) } ?? false)
        }
        switch outcome {
        case .ignore:
            return
        case .forward(let successor):
            successor.handleResponse(response, storagePolicy: storagePolicy, generation: generation)
        case .refused(let refusal):
            complete(error: refusal, generation: generation)
        case .accepted(let schedule):
            if schedule { scheduleDrain() }
            if bodyDestination == .file {
                do { _ = try ensureDownloadFile() } catch { complete(error: error, generation: generation) }
            }
        }
    }

    /// The step asking a data task's delegate what to do with `response`; body chunks are held
    /// until it answers.
    private func makeDispositionStep(for response: URLResponse) -> TaskEventQueue.AwaitingStep? {
        guard let session, let dataTask = self as? URLSessionDataTask else { return nil }
        return { [self] resume in
            let decide: @Sendable (URLSession.ResponseDisposition) -> Void = { [self] disposition in
                switch disposition {
                case .allow:
                    releaseHeldBody()
                case .cancel:
                    cancel()
                case .becomeDownload:
                    becomeDownload(after: response)
                case .becomeStream:
                    becomeStream(after: response)
                }
                resume()
            }
            let asked = sendToDelegate(.response, as: (any URLSessionDataDelegate).self) {
                $0.urlSession(session, dataTask: dataTask, didReceive: response, completionHandler: decide)
            }
            if !asked { decide(.allow) }
        }
    }

    /// The step delivering one body chunk to a data task's delegate.
    func makeDataStep(_ data: Data) -> (@Sendable () -> Void)? {
        guard let session, let dataTask = self as? URLSessionDataTask else { return nil }
        return { [self] in
            sendToDelegate(.data, as: (any URLSessionDataDelegate).self) {
                $0.urlSession(session, dataTask: dataTask, didReceive: data)
            }
        }
    }

    /// A body chunk: one lock round-trip decides and queues it (a chunk for the delegate), or
    /// decides and hands back the file to write it to (a download).
    func handleData(_ data: Data, generation: Int?) {
        let step = bodyDestination == .delegate ? makeDataStep(data) : nil
        enum Route { case none, write(DownloadFile?, URL?, queued: Bool), delivered(schedule: Bool), forward(URLSessionDownloadTask), overLimit(Int64, URL?) }
        let (route, progress, received): (Route, Progress?, Int64) = lock.withLock {
            switch core.machine.route(generation) {
            case .stale: return (.none, nil, 0)
            case .forward(let successor): return (.forward(successor), nil, 0)
            case .current: break
            }
            // Past the limit nothing more is kept or delivered, and the handler is stopped.
            if let limit = core.bodyLimit, core.bytesReceived + Int64(data.count) > limit {
                return (.overLimit(limit, core.currentRequest?.url), nil, 0)
            }
            core.bytesReceived += Int64(data.count)
            core.lastActivity = monotonicNanoseconds()
            appendCacheCopyLocked(data)
            if case .held = core.machine.body(data) { return (.none, core.progress, core.bytesReceived) }
            let route: Route
            switch bodyDestination {
            case .file:
                // Only a handler that asks `canAcceptMoreData` is held back by what waits for the
                // writer; any other is held back by writing on its own thread, as it always was.
                let queued = core.machine.currentLoad?.handler.capabilities.contains(.flowControl) ?? false
                route = .write(core.downloadFile, core.currentRequest?.url, queued: queued)
            case .memory:
                core.body.append(data)
                route = .none
            case .delegate:
                route = .delivered(schedule: step.map { core.events.append(.immediate($0, bytes: data.count), paused: core.machine.isDeliveryPaused) } ?? false)
            }
            return (route, core.progress, core.bytesReceived)
        }
        progress?.completedUnitCount = received
        switch route {
        case .none:
            return
        case .delivered(let schedule):
            if schedule { scheduleDrain() }
        case .overLimit(let limit, let url):
            complete(error: ResponseBodyLimit.exceeded(limit, url: url), generation: generation)
        case .forward(let successor):
            successor.handleData(data, generation: generation)
        case .write(let file, let url, let queued):
            if queued {
                writeBodyLater(data, to: file, url: url, generation: generation)
            } else {
                writeBody(data, to: file, url: url, generation: generation)
            }
        }
    }

    /// Hands a chunk to the download file's writer queue, so this thread (a flow-controlled
    /// handler's event loop) goes back to receiving while the disk write runs; the chunk counts
    /// against back-pressure until it is written (``TaskCore/waitingBodyBytes``). Once written, the bytes are reported
    /// with `didWriteData`, throttled, and a handler waiting for them is woken; a failed write
    /// fails the task.
    private func writeBodyLater(_ data: Data, to known: DownloadFile?, url: URL?, generation: Int?) {
        let file: DownloadFile
        do {
            file = try known ?? ensureDownloadFile()
        } catch {
            complete(error: error, generation: generation)
            return
        }
        let count = data.count
        let reports = completion.usesDelegate
        file.append(data, for: url) { [self] failure in
            let (wake, report): (ActiveLoad?, WriteReportThrottle.Decision) = lock.withLock {
                let report = failure == nil && reports ? core.writeReports.wrote(Int64(count), now: monotonicNanoseconds()) : .none
                return (core.machine.drained(pendingBytes: core.waitingBodyBytes), report)
            }
            wake?.resumeProducing()
            if let failure {
                complete(error: failure, generation: generation)
            } else {
                scheduleWriteReport(report)
            }
        }
    }

    /// Writes a chunk to the download file (created on first use) and reports it with
    /// `didWriteData`, throttled; a failed write fails the task and answers `false`.
    @discardableResult
    func writeBody(_ data: Data, to known: DownloadFile?, url: URL?, generation: Int?) -> Bool {
        do {
            let file = try known ?? ensureDownloadFile()
            try file.write(data, for: url)
        } catch {
            complete(error: error, generation: generation)
            return false
        }
        guard completion.usesDelegate else { return true }
        scheduleWriteReport(lock.withLock { core.writeReports.wrote(Int64(data.count), now: monotonicNanoseconds()) })
        return true
    }

    /// Queues the `didWriteData` a write's `report` asks for: now, or after the throttle's interval.
    private func scheduleWriteReport(_ report: WriteReportThrottle.Decision) {
        switch report {
        case .none:
            break
        case .now:
            enqueue { [self] in reportWrittenBytes() }
        case .later:
            // Throttled: make sure these bytes are reported even if no more arrive.
            let interval = DispatchTimeInterval.nanoseconds(Int(WriteReportThrottle.reportInterval))
            DispatchQueue.global().asyncAfter(deadline: .now() + interval) { [self] in flushDeferredWriteReport() }
        }
    }

    /// The deferred `didWriteData` for bytes a throttled report left behind.
    private func flushDeferredWriteReport() {
        let schedule: Bool = lock.withLock { core.writeReports.deferredCheck(now: monotonicNanoseconds()) }
        if schedule { enqueue { [self] in reportWrittenBytes() } }
    }

    /// Sends one `didWriteData` for every write since the last one (runs on the delegate queue).
    func reportWrittenBytes() {
        guard let session, let downloadTask = self as? URLSessionDownloadTask else { return }
        let (written, total, expected): (Int64, Int64, Int64) = lock.withLock {
            let report = core.writeReports.take()
            return (report.written, report.total, core.bytesExpectedToReceive)
        }
        guard written > 0 else { return }
        sendToDelegate(.wroteData, as: (any URLSessionDownloadDelegate).self) {
            $0.urlSession(session, downloadTask: downloadTask, didWriteData: written,
                          totalBytesWritten: total, totalBytesExpectedToWrite: expected)
        }
    }

    func handleResumed(atOffset offset: Int64, expectedTotalBytes: Int64, generation: Int) {
        let accepted: Bool = lock.withLock {
            guard isCurrentLocked(generation), bodyDestination == .file,
                  let file = core.downloadFile, file.bytesAccepted == offset else { return false }
            core.resumedAtOffset = offset
            core.bytesReceived = offset
            core.writeReports.restart(at: offset)
            core.bytesExpectedToReceive = expectedTotalBytes
            return true
        }
        guard accepted, completion.usesDelegate, let session, let downloadTask = self as? URLSessionDownloadTask else { return }
        enqueue { [self] in
            sendToDelegate(.resumedAtOffset, as: (any URLSessionDownloadDelegate).self) {
                $0.urlSession(session, downloadTask: downloadTask, didResumeAtOffset: offset,
                              expectedTotalBytes: expectedTotalBytes)
            }
        }
    }

    /// A challenge from the load `generation` (`nil`: from the task itself, such as a stream
    /// task's TLS) goes to the delegate as an awaiting step.
    func handleChallenge(_ challenge: URLAuthenticationChallenge, generation: Int?) {
        guard let session, let context else { return }
        switch lock.withLock({ core.machine.route(generation) }) {
        case .stale: return
        case .forward(let successor): return successor.handleChallenge(challenge, generation: generation)
        case .current: break
        }
        enqueueAwaiting { [self] resume in
            guard let sender = challenge.sender else { resume(); return }
            let answer: @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void = { disposition, credential in
                switch disposition {
                case .useCredential:
                    if let credential { sender.use(credential, for: challenge) } else { sender.continueWithoutCredential(for: challenge) }
                case .performDefaultHandling:
                    sender.performDefaultHandling(for: challenge)
                case .cancelAuthenticationChallenge:
                    sender.cancel(challenge)
                case .rejectProtectionSpace:
                    sender.rejectProtectionSpaceAndContinue(with: challenge)
                }
                resume()
            }
            // A session delegate that adopts only `URLSessionDelegate` still hears session-wide challenges.
            let sessionWide = URLSession.isSessionWideAuthenticationMethod(challenge.protectionSpace.authenticationMethod)
            let shared = context.owner.delegate
            let sharedTaskLevel = shared as? URLSessionTaskDelegate
            let fallsThrough = sharedTaskLevel != nil || (sessionWide && shared != nil)
            if sendToOwnDelegate(.challenge, as: (any URLSessionTaskDelegate).self, fallsThrough: fallsThrough, {
                $0.urlSession(session, task: self, didReceive: challenge, completionHandler: answer)
            }) {
                return
            }
            if let sharedTaskLevel {
                sharedTaskLevel.urlSession(session, task: self, didReceive: challenge, completionHandler: answer)
            } else if sessionWide, let shared {
                shared.urlSession(session, didReceive: challenge, completionHandler: answer)
            } else {
                answer(.performDefaultHandling, nil)
            }
        }
    }

    /// Whether a flow-controlled handler may produce more now; a refusal records that it waits to
    /// be woken (by the drain, or by `resume()`).
    func canAcceptMoreData(generation: Int) -> Bool {
        let answer: Machine.FlowAnswer = lock.withLock {
            core.machine.canAcceptMoreData(generation: generation, pendingBytes: core.waitingBodyBytes)
        }
        switch answer {
        case .accept: return true
        case .refuse: return false
        case .forward(let successor): return successor.canAcceptMoreData(generation: generation)
        }
    }

    func handleSentBodyData(_ sent: Int64, total: Int64, expected: Int64, generation: Int) {
        guard let session else { return }
        let route: Machine.Route = lock.withLock {
            let route = core.machine.route(generation)
            guard case .current = route else { return route }
            core.bytesSent = total
            core.bytesExpectedToSend = expected
            core.lastActivity = monotonicNanoseconds()
            return route
        }
        switch route {
        case .stale:
            return
        case .forward(let successor):
            successor.handleSentBodyData(sent, total: total, expected: expected, generation: generation)
        case .current:
            enqueue { [self] in
                sendToDelegate(.sentBodyData, as: (any URLSessionTaskDelegate).self) {
                    $0.urlSession(session, task: self, didSendBodyData: sent, totalBytesSent: total,
                                  totalBytesExpectedToSend: expected)
                }
            }
        }
    }

    /// A handler retrying with a streamed body needs a new stream: the delegate is asked in order
    /// with the task's other delegate calls.
    func handleNeedNewBodyStream(generation: Int, completion: @escaping @Sendable (InputStream?) -> Void) {
        guard let session else {
            completion(nil)
            return
        }
        switch lock.withLock({ core.machine.route(generation) }) {
        case .stale:
            completion(nil)
            return
        case .forward(let successor):
            successor.handleNeedNewBodyStream(generation: generation, completion: completion)
            return
        case .current:
            break
        }
        enqueueAwaiting { [self] resume in
            let once = OnceFlag()
            let provide: @Sendable (InputStream?) -> Void = { stream in
                guard once.claim() else { return }
                completion(stream)
                resume()
            }
            let asked = sendToDelegate(.needNewBodyStream, as: (any URLSessionTaskDelegate).self) {
                $0.urlSession(session, task: self, needNewBodyStream: provide)
            }
            if !asked { provide(nil) }
        }
    }

    func handleWaitingForConnectivity(generation: Int) {
        enum Outcome { case ignore, forward(URLSessionDownloadTask), first }
        let outcome: Outcome = lock.withLock {
            if case .forward(let successor) = core.machine.route(generation) { return .forward(successor) }
            guard core.machine.waitingForConnectivity(generation: generation) else { return .ignore }
            defer { core.toldWaitingForConnectivity = true }
            return core.toldWaitingForConnectivity ? .ignore : .first
        }
        switch outcome {
        case .ignore:
            return
        case .forward(let successor):
            successor.handleWaitingForConnectivity(generation: generation)
        case .first:
            guard let session else { return }
            enqueue { [self] in
                sendToDelegate(.waitingForConnectivity, as: (any URLSessionTaskDelegate).self) {
                    $0.urlSession(session, taskIsWaitingForConnectivity: self)
                }
            }
        }
    }

    func handleResumeValidator(_ validator: String, generation: Int) {
        let route: Machine.Route = lock.withLock {
            let route = core.machine.route(generation)
            guard case .current = route else { return route }
            core.resumeValidator = validator
            core.handlerCanResume = true
            return route
        }
        if case .forward(let successor) = route { successor.handleResumeValidator(validator, generation: generation) }
    }

    /// Adds what a handler measured to the current transaction's metrics.
    func handleTransactionMetrics(_ update: @escaping @Sendable (inout URLSessionTaskTransactionMetrics.Values) -> Void,
                                  generation: Int) {
        let route: Machine.Route = lock.withLock {
            let route = core.machine.route(generation)
            if case .current = route { core.metrics.updateCurrent(update) }
            return route
        }
        if case .forward(let successor) = route { successor.handleTransactionMetrics(update, generation: generation) }
    }

    /// The download file, created on first use.
    func ensureDownloadFile() throws(URLError) -> DownloadFile {
        if let existing = lock.withLock({ core.downloadFile }) { return existing }
        let created = try DownloadFile.create(for: currentRequest?.url)
        return lock.withLock {
            if let raced = core.downloadFile { created.remove(); return raced }
            core.downloadFile = created
            return created
        }
    }
}
