import Foundation

// What handlers report, turned into task state and pipeline steps. `generation` names the handler
// instance reporting; `nil` means the task itself (a refused redirect, a failure before loading).
extension URLSessionTask {
    /// High-water mark of undelivered body bytes before a flow-controlled handler is paused.
    static let highWaterBytes = 8 << 20
    /// Low-water mark at which a paused handler is resumed.
    static let lowWaterBytes = 2 << 20
    /// `didWriteData` is sent at most once per this many bytes or this many nanoseconds (and once
    /// more before `didFinishDownloadingTo`), so fast downloads do not wake the delegate per chunk.
    static let writeReportBytes: Int64 = 1 << 20
    static let writeReportInterval: UInt64 = 50_000_000

    /// Whether reports from `generation` still count. Call with the lock held.
    func isCurrentLocked(_ generation: Int?) -> Bool {
        switch core.phase {
        case .loading(let load): return generation == nil || load.generation == generation
        case .preparing: return generation == nil
        case .idle, .finishing, .done: return false
        }
    }

    /// `storagePolicy` is where the handler allows the response to be cached (see
    /// `URLSessionTask+Caching.swift`).
    func handleResponse(_ response: URLResponse, storagePolicy: URLCache.StoragePolicy = .notAllowed, generation: Int?) {
        let ask: Bool? = lock.withLock {
            guard isCurrentLocked(generation) else { return nil }
            core.response = response
            core.lastActivity = monotonicNanoseconds()
            core.waitingForConnectivity = false
            core.metrics.responseReceived(response)
            beginCacheCopyLocked(for: response, policy: storagePolicy)
            if kind == .download, core.resumedAtOffset == nil, let file = core.downloadFile, file.bytesWritten > 0 {
                // The handler did not resume: start the file over rather than splice two versions.
                file.truncate()
                core.bytesReceived = 0
                core.reportedWrittenTotal = 0
            }
            if core.resumedAtOffset == nil {
                core.bytesExpectedToReceive = response.expectedContentLength
            }
            if case .data = completion, kind != .download, response.expectedContentLength > 0,
               response.expectedContentLength <= Int64(Int32.max) {
                core.body.reserveCapacity(Int(response.expectedContentLength))
            }
            if let progress = core.progress, core.bytesExpectedToReceive >= 0 {
                progress.totalUnitCount = core.bytesExpectedToReceive
            }
            let ask = completion.usesDelegate && kind != .download
            if ask { core.heldBody = [] }
            return ask
        }
        guard let ask else { return }
        // A body announced over the limit fails now, before a byte of it is read.
        if let refusal = ResponseBodyLimit.refusal(of: response, limit: lock.withLock({ core.bodyLimit })) {
            complete(error: refusal, generation: generation)
            return
        }
        if kind == .download {
            do { _ = try ensureDownloadFile() } catch { complete(error: error, generation: generation) }
            return
        }
        guard ask, let session, let pipeline, let dataTask = self as? URLSessionDataTask else { return }
        pipeline.enqueueAwaiting { [self] resume in
            let decide: @Sendable (URLSession.ResponseDisposition) -> Void = { [self] disposition in
                switch disposition {
                case .allow:
                    releaseHeldBody()
                case .cancel:
                    cancel()
                case .becomeDownload:
                    becomeDownload(after: response)
                }
                resume()
            }
            let asked = sendToDelegate(.response, as: (any URLSessionDataDelegate).self) {
                $0.urlSession(session, dataTask: dataTask, didReceive: response, completionHandler: decide)
            }
            if !asked { decide(.allow) }
        }
    }

    func handleData(_ data: Data, generation: Int?) {
        enum Route { case none, write, deliver, forward(URLSessionDownloadTask), overLimit(Int64) }
        let (route, progress, received): (Route, Progress?, Int64) = lock.withLock {
            if case .done = core.phase, let successor = core.successor { return (.forward(successor), nil, 0) }
            guard isCurrentLocked(generation) else { return (.none, nil, 0) }
            // Past the limit nothing more is kept or delivered, and the handler is stopped.
            if let limit = core.bodyLimit, core.bytesReceived + Int64(data.count) > limit { return (.overLimit(limit), nil, 0) }
            core.bytesReceived += Int64(data.count)
            core.lastActivity = monotonicNanoseconds()
            appendCacheCopyLocked(data)
            let route: Route
            if kind == .download {
                route = .write
            } else if case .data = completion {
                core.body.append(data)
                route = .none
            } else if core.heldBody != nil {
                core.heldBody?.append(data)
                route = .none
            } else {
                route = .deliver
            }
            return (route, core.progress, core.bytesReceived)
        }
        progress?.completedUnitCount = received
        switch route {
        case .none:
            return
        case .overLimit(let limit):
            complete(error: ResponseBodyLimit.exceeded(limit, url: currentRequest?.url), generation: generation)
        case .forward(let successor):
            successor.handleData(data, generation: generation)
        case .write:
            do {
                let file = try ensureDownloadFile()
                try file.write(data, for: currentRequest?.url)
            } catch {
                complete(error: error, generation: generation)
                return
            }
            guard completion.usesDelegate else { return }
            enum Report { case none, now, later }
            let report: Report = lock.withLock {
                core.unreportedWrittenBytes += Int64(data.count)
                if core.writeReportQueued { return .none }
                let now = monotonicNanoseconds()
                guard core.unreportedWrittenBytes >= Self.writeReportBytes
                        || now &- core.lastWriteReport >= Self.writeReportInterval else {
                    // Throttled: make sure these bytes are reported even if no more arrive.
                    if core.writeReportDeferred { return .none }
                    core.writeReportDeferred = true
                    return .later
                }
                core.writeReportQueued = true
                core.lastWriteReport = now
                return .now
            }
            switch report {
            case .none:
                break
            case .now:
                pipeline?.enqueue { [self] in reportWrittenBytes() }
            case .later:
                let interval = DispatchTimeInterval.nanoseconds(Int(Self.writeReportInterval))
                DispatchQueue.global().asyncAfter(deadline: .now() + interval) { [self] in flushDeferredWriteReport() }
            }
        case .deliver:
            guard let session, let dataTask = self as? URLSessionDataTask else { return }
            pipeline?.enqueue(bytes: data.count) { [self] in
                sendToDelegate(.data, as: (any URLSessionDataDelegate).self) {
                    $0.urlSession(session, dataTask: dataTask, didReceive: data)
                }
            }
        }
    }

    /// Sends one `didWriteData` for every write since the last one (runs on the delegate queue).
    /// The deferred `didWriteData` for bytes a throttled report left behind.
    private func flushDeferredWriteReport() {
        let schedule: Bool = lock.withLock {
            core.writeReportDeferred = false
            guard core.unreportedWrittenBytes > 0, !core.writeReportQueued else { return false }
            core.writeReportQueued = true
            core.lastWriteReport = monotonicNanoseconds()
            return true
        }
        if schedule { pipeline?.enqueue { [self] in reportWrittenBytes() } }
    }

    func reportWrittenBytes() {
        guard let session, let downloadTask = self as? URLSessionDownloadTask else { return }
        let (written, total, expected): (Int64, Int64, Int64) = lock.withLock {
            let written = core.unreportedWrittenBytes
            core.unreportedWrittenBytes = 0
            core.writeReportQueued = false
            core.reportedWrittenTotal += written
            return (written, core.reportedWrittenTotal, core.bytesExpectedToReceive)
        }
        guard written > 0 else { return }
        sendToDelegate(.wroteData, as: (any URLSessionDownloadDelegate).self) {
            $0.urlSession(session, downloadTask: downloadTask, didWriteData: written,
                          totalBytesWritten: total, totalBytesExpectedToWrite: expected)
        }
    }

    func handleResumed(atOffset offset: Int64, expectedTotalBytes: Int64, generation: Int) {
        let accepted: Bool = lock.withLock {
            guard isCurrentLocked(generation), kind == .download,
                  let file = core.downloadFile, file.bytesWritten == offset else { return false }
            core.resumedAtOffset = offset
            core.bytesReceived = offset
            core.reportedWrittenTotal = offset
            core.bytesExpectedToReceive = expectedTotalBytes
            return true
        }
        guard accepted, completion.usesDelegate, let session, let downloadTask = self as? URLSessionDownloadTask else { return }
        pipeline?.enqueue { [self] in
            sendToDelegate(.resumedAtOffset, as: (any URLSessionDownloadDelegate).self) {
                $0.urlSession(session, downloadTask: downloadTask, didResumeAtOffset: offset,
                              expectedTotalBytes: expectedTotalBytes)
            }
        }
    }

    func handleChallenge(_ challenge: URLAuthenticationChallenge, generation: Int) {
        guard let session, let pipeline, lock.withLock({ isCurrentLocked(generation) }) else { return }
        pipeline.enqueueAwaiting { [self] resume in
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
            let shared = session.delegate
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

    /// Whether a flow-controlled handler may produce more now; remembers to wake it when not.
    func canAcceptMoreData(generation: Int) -> Bool {
        let pending = completion.usesDelegate && kind != .download ? (pipeline?.bytesPending ?? 0) : 0
        return lock.withLock {
            guard isCurrentLocked(generation) else { return false }
            // Body held while the delegate decides about the response counts as pending too.
            let held = core.heldBody?.reduce(0) { $0 + $1.count } ?? 0
            if core.state != .running || pending + held > Self.highWaterBytes {
                core.producerWaiting = true
                return false
            }
            // The handler is producing, so it is not waiting to be woken (the idle clock runs).
            core.producerWaiting = false
            return true
        }
    }

    /// The pipeline delivered body bytes: wake a paused handler below the low-water mark.
    func pipelineDrained(pendingBytes: Int) {
        guard pendingBytes < Self.lowWaterBytes else { return }
        let load: ActiveLoad? = lock.withLock {
            guard core.producerWaiting, core.state == .running, case .loading(let load) = core.phase else { return nil }
            core.producerWaiting = false
            return load
        }
        load?.resumeProducing()
    }

    func handleSentBodyData(_ sent: Int64, total: Int64, expected: Int64, generation: Int) {
        guard let session, lock.withLock({ () -> Bool in
            guard isCurrentLocked(generation) else { return false }
            core.bytesSent = total
            core.bytesExpectedToSend = expected
            core.lastActivity = monotonicNanoseconds()
            return true
        }) else { return }
        pipeline?.enqueue { [self] in
            sendToDelegate(.sentBodyData, as: (any URLSessionTaskDelegate).self) {
                $0.urlSession(session, task: self, didSendBodyData: sent, totalBytesSent: total,
                              totalBytesExpectedToSend: expected)
            }
        }
    }

    /// A handler retrying with a streamed body needs a new stream: the delegate is asked in order
    /// with the task's other delegate calls.
    func handleNeedNewBodyStream(generation: Int, completion: @escaping @Sendable (InputStream?) -> Void) {
        guard let session, let pipeline, lock.withLock({ isCurrentLocked(generation) }) else {
            completion(nil)
            return
        }
        pipeline.enqueueAwaiting { [self] resume in
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
        let first: Bool = lock.withLock {
            guard isCurrentLocked(generation) else { return false }
            core.waitingForConnectivity = true
            defer { core.toldWaitingForConnectivity = true }
            return !core.toldWaitingForConnectivity
        }
        guard first, let session else { return }
        pipeline?.enqueue { [self] in
            sendToDelegate(.waitingForConnectivity, as: (any URLSessionTaskDelegate).self) {
                $0.urlSession(session, taskIsWaitingForConnectivity: self)
            }
        }
    }

    func handleResumeValidator(_ validator: String, generation: Int) {
        lock.withLock {
            guard isCurrentLocked(generation) else { return }
            core.resumeValidator = validator
            core.handlerCanResume = true
        }
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
