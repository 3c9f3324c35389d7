import Foundation

// Ending a task: exactly one completion, delivered after everything queued before it.
extension URLSessionTask {
    /// Ends the task with `error` (nil for success) unless it is already ending. The handler is
    /// stopped; body bytes already queued are delivered first. A successful data task whose
    /// response may be cached stores it (after asking `willCacheResponse`) before its completion.
    func complete(error: (any Error)?, generation: Int?) {
        guard let pipeline else { return }
        var toCache: CachedURLResponse?
        let load: ActiveLoad?? = lock.withLock {
            guard isCurrentLocked(generation) else { return .none }
            var current: ActiveLoad? = nil
            if case .loading(let load) = core.phase { current = load }
            core.phase = .finishing
            core.completionError = error
            let cacheable = takeResponseToCacheLocked()
            if error == nil { toCache = cacheable }
            // A body over the size limit is not worth resuming: its partial file goes.
            if error != nil, kind == .download, core.handlerCanResume, core.bytesReceived > 0,
               (error as? URLError)?.code != .dataLengthExceedsMaximum {
                core.keepPartialFile = true
            }
            return .some(current)
        }
        guard case .some(let active) = load else { return }
        active?.stop()
        if let toCache { enqueueCacheStore(toCache) }
        let url = currentRequest?.url
        let finalError = error.map { Self.withFailingURL($0, url: url) }
        pipeline.close { [self] in
            var delivered = finalError
            if let failure = finalError as? URLError, lock.withLock({ core.keepPartialFile }) {
                if let data = makeResumeData() { delivered = failure.addingResumeData(data) }
            }
            deliverCompletion(error: delivered)
        }
        session?.taskWillComplete(self)
    }

    /// `error` with `failingURL` set when it is a `URLError` without one.
    static func withFailingURL(_ error: any Error, url: URL?) -> any Error {
        guard let urlError = error as? URLError, urlError.failingURL == nil, let url else { return error }
        var info = urlError.userInfo
        info[NSURLErrorFailingURLErrorKey] = url
        info[URLError.failingURLStringKey] = url.absoluteString
        return URLError(urlError.code, userInfo: info)
    }

    /// Resume data for the partial download, or nil (and the partial file is then not kept).
    func makeResumeData() -> Data? {
        lock.withLock {
            guard kind == .download, core.handlerCanResume, let file = core.downloadFile, file.bytesWritten > 0,
                  let url = core.currentRequest?.url, let original = initialRequest?.url else {
                core.keepPartialFile = false
                return nil
            }
            file.finishWriting()
            let loading = core.currentRequest
            let timeout = loading?.timeoutInterval
            let resume = DownloadResumeData(url: url, originalURL: original, bytesReceived: file.bytesWritten,
                                            expectedTotalBytes: core.bytesExpectedToReceive,
                                            partialFilePath: file.url.path, validator: core.resumeValidator,
                                            headerFields: DownloadResumeData.keptHeaderFields(of: loading),
                                            timeoutInterval: timeout == 60 ? nil : timeout)
            let encoded = resume.encoded()
            core.keepPartialFile = encoded != nil
            return encoded
        }
    }

    /// The final step, on the delegate queue: completion handler or delegate, then the session is told.
    func deliverCompletion(error: (any Error)?) {
        guard let session else { return }
        let (file, keepFile, body, response, progress, received) = lock.withLock {
            core.state = .completed
            core.phase = .done
            core.error = error
            let file = core.downloadFile
            core.downloadFile = nil
            let body = core.body
            core.body = Data()
            return (file, core.keepPartialFile, body, core.response, core.progress, core.bytesReceived)
        }
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
            if kind == .download, error == nil, let downloadTask = self as? URLSessionDownloadTask,
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
        session.taskDidComplete(self)
    }

    /// The closed download file, created empty when the body was empty.
    private func finishedDownloadLocation(_ file: DownloadFile?) -> URL? {
        if let file {
            file.finishWriting()
            return file.url
        }
        guard kind == .download, let created = try? DownloadFile.create(for: currentRequest?.url) else { return nil }
        created.finishWriting()
        return created.url
    }
}
