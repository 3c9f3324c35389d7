import Foundation

// Ending a task: exactly one completion, delivered after everything queued before it.
extension URLSessionTask {
    /// Ends the task with `error` (nil for success) unless it is already ending. The handler is
    /// stopped (once: the state machine gives it back only here); body bytes already queued are
    /// delivered first. A successful data task whose response may be cached stores it (after
    /// asking `willCacheResponse`) before its completion.
    func complete(error: (any Error)?, generation: Int?) {
        enum Outcome { case ignore, forward(URLSessionDownloadTask), finished(stop: ActiveLoad?, schedule: Bool) }
        let outcome: Outcome = lock.withLock {
            let stop: ActiveLoad?
            switch core.machine.finish(error: error, generation: generation) {
            case .ignore: return .ignore
            case .forward(let successor): return .forward(successor)
            case .finish(let load): stop = load
            }
            let cacheable = takeResponseToCacheLocked()
            // A failed download that can resume keeps its partial file, with resume data in the
            // error; a body over the size limit is not worth resuming.
            let resumable = error != nil && bodyDestination == .file && core.handlerCanResume && core.bytesReceived > 0
                && (error as? URLError)?.code != .dataLengthExceedsMaximum
            let finalError = error.map { Self.withFailingURL($0, url: core.currentRequest?.url) }
            var schedule = false
            if error == nil, let cacheable, let store = makeCacheStoreStep(cacheable) {
                schedule = core.events.append(.awaiting(store), paused: core.machine.isDeliveryPaused)
            }
            let final: @Sendable () -> Void = { [self] in
                if resumable, let failure = finalError as? URLError, let data = makeResumeData() {
                    deliverCompletion(error: failure.addingResumeData(data), keepFile: true)
                } else {
                    deliverCompletion(error: finalError, keepFile: false)
                }
            }
            schedule = core.events.close(withFinal: final, paused: core.machine.isDeliveryPaused) || schedule
            return .finished(stop: stop, schedule: schedule)
        }
        switch outcome {
        case .ignore:
            return
        case .forward(let successor):
            successor.complete(error: error, generation: generation)
        case .finished(let stop, let schedule):
            stop?.stop()
            if schedule { scheduleDrain() }
            didDecideCompletion(error: error)
        }
    }

    /// `error` with `failingURL` set when it is a `URLError` without one.
    static func withFailingURL(_ error: any Error, url: URL?) -> any Error {
        guard let urlError = error as? URLError, urlError.failingURL == nil, let url else { return error }
        var info = urlError.userInfo
        info[NSURLErrorFailingURLErrorKey] = url
        info[URLError.failingURLStringKey] = url.absoluteString
        return URLError(urlError.code, userInfo: info)
    }

    /// Resume data for the partial download, or nil (the partial file is then not kept). It counts
    /// what reached the file, so the queued writes are waited for first: call with no lock held.
    /// `closingFile: false` (a checkpoint of the running download) leaves the file open.
    func makeResumeData(closingFile: Bool = true) -> Data? {
        lock.withLock { core.downloadFile }?.waitForWrites()
        return lock.withLock {
            guard bodyDestination == .file, core.handlerCanResume, let file = core.downloadFile, file.bytesWritten > 0,
                  let url = core.currentRequest?.url, let original = initialRequest?.url else {
                return nil
            }
            if closingFile { file.finishWriting() }
            let loading = core.currentRequest
            let timeout = loading?.timeoutInterval
            let resume = DownloadResumeData(url: url, originalURL: original, bytesReceived: file.bytesWritten,
                                            expectedTotalBytes: core.bytesExpectedToReceive,
                                            partialFilePath: file.url.path, validator: core.resumeValidator,
                                            headerFields: DownloadResumeData.keptHeaderFields(of: loading),
                                            timeoutInterval: timeout == 60 ? nil : timeout)
            return resume.encoded()
        }
    }

    /// The final step, on the delegate queue: completion handler or delegate, then the session is
    /// told. `keepFile`: the partial download stays on disk for the resume data `error` carries. A
    /// download's queued writes are finished first; one that failed after the load ended fails the
    /// task (`cannotWriteToFile`) instead of handing over a short file. `reportsWrites`: bytes the
    /// writer finished after the load ended still get their `didWriteData` first, as when the loop
    /// wrote them itself and queued the report ahead of the end; not after `cancel()`, which drops
    /// whatever was queued.
    func deliverCompletion(error reported: (any Error)?, keepFile: Bool, reportsWrites: Bool = true) {
        guard let session else { return }
        // A stream task's pending reads and writes complete first; one whose streams were captured
        // ends without further messages, as Apple documents.
        if let streamTask = self as? URLSessionStreamTask, streamTask.streamWillComplete(error: reported) {
            context?.owner.taskDidComplete(self)
            return
        }
        let pendingFile = lock.withLock { core.downloadFile }
        pendingFile?.waitForWrites()
        let error = reported ?? pendingFile?.writeFailure
        let (file, body, response, progress, received) = lock.withLock {
            core.error = error
            let file = core.downloadFile
            core.downloadFile = nil
            let body = core.body
            core.body = Data()
            return (file, body, core.response, core.progress, core.bytesReceived)
        }
        if reportsWrites, file != nil, completion.usesDelegate { reportWrittenBytes() }
        if let progress {
            if progress.totalUnitCount <= 0 { progress.totalUnitCount = max(received, 1) }
            progress.completedUnitCount = error == nil ? progress.totalUnitCount : received
        }
        // Metrics are built only when a delegate may receive them.
        let metrics = hasTaskDelegate ? lock.withLock { core.metrics.finish(redirectCount: core.redirectCount) } : nil
        let sendMetrics = { [self] in
            guard let metrics else { return }
            sendToDelegate(.metrics, as: (any URLSessionTaskDelegate).self) {
                $0.urlSession(session, task: self, didFinishCollecting: metrics)
            }
        }

        // Apple's order: the downloaded file, then metrics, then the completion.
        switch completion {
        case .data(let handler):
            sendMetrics()
            handler(error == nil ? body : nil, response, error)
        case .download(let handler):
            sendMetrics()
            if error == nil, let location = finishedDownloadLocation(file) {
                handler(location, response, nil)
                file?.remove()
            } else {
                if !keepFile { file?.remove() }
                handler(nil, response, error)
            }
        case .delegate:
            if error == nil, let downloadTask = self as? URLSessionDownloadTask,
               let location = finishedDownloadLocation(file) {
                reportWrittenBytes()
                sendToDelegate(.finishedDownloading, as: (any URLSessionDownloadDelegate).self) {
                    $0.urlSession(session, downloadTask: downloadTask, didFinishDownloadingTo: location)
                }
                file?.remove()
            } else if !keepFile {
                file?.remove()
            }
            sendMetrics()
            sendToDelegate(.completion, as: (any URLSessionTaskDelegate).self) {
                $0.urlSession(session, task: self, didCompleteWithError: error)
            }
        }
        lock.withLock { core.delegate = nil }
        context?.owner.taskDidComplete(self)
    }

    /// The closed download file, created empty when the body was empty.
    private func finishedDownloadLocation(_ file: DownloadFile?) -> URL? {
        if let file {
            file.finishWriting()
            return file.url
        }
        guard bodyDestination == .file, let created = try? DownloadFile.create(for: currentRequest?.url) else { return nil }
        created.finishWriting()
        return created.url
    }
}
