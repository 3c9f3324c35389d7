import Foundation

// Starting handlers: the first load, loads after redirects, and the body stream an upload needs.
extension URLSessionTask {
    /// Called once when the task is first resumed.
    func beginLoading() {
        guard session != nil else { return }
        if let creationFailure {
            complete(error: creationFailure, generation: nil)
            return
        }
        if case .file(let fileURL) = uploadBody, !FileManager.default.isReadableFile(atPath: fileURL.path) {
            let exists = FileManager.default.fileExists(atPath: fileURL.path)
            complete(error: URLError(exists ? .noPermissionsToReadFile : .fileDoesNotExist, url: initialRequest?.url,
                                     description: "The upload body file \(fileURL.path) \(exists ? "cannot be read" : "does not exist")."),
                     generation: nil)
            return
        }
        if case .failure(let error)? = resumeSource {
            complete(error: error, generation: nil)
            return
        }
        guard var request = initialRequest else {
            complete(error: URLError(.badURL, url: nil, description: "The task has no request."), generation: nil)
            return
        }
        switch resumeSource {
        case .failure?:
            return
        case .success(let resume)?:
            guard session?.resolver.resumesDownloads(of: resume.url) == true else {
                let scheme = resume.url.scheme.map { "“\($0)”" } ?? "(no scheme)"
                complete(error: URLError(.cannotDecodeRawData, url: resume.url,
                                         description: "The resume data names a URL whose scheme \(scheme) cannot resume a download."),
                         generation: nil)
                return
            }
            do {
                let file = try DownloadFile.reopen(path: resume.partialFilePath, expectedLength: resume.bytesReceived, for: resume.url)
                lock.withLock { core.downloadFile = file }
            } catch {
                complete(error: error, generation: nil)
                return
            }
            request.setProtocolProperty(resume.bytesReceived, forKey: ResumeRequest.offsetKey)
            if let validator = resume.validator {
                request.setProtocolProperty(validator, forKey: ResumeRequest.validatorKey)
            }
        case nil:
            break
        }
        if case .stream = uploadBody {
            requestBodyStream(then: request)
        } else {
            startLoad(request)
        }
    }

    /// Asks the delegate for the upload's body stream, then starts loading with it (`redirected`:
    /// see ``startLoad(_:redirected:)``).
    func requestBodyStream(then request: URLRequest, redirected: Bool = false) {
        guard let session, let pipeline else { return }
        let requestBox = UncheckedSendable(request)
        pipeline.enqueueAwaiting { [self] resume in
            let proceed: @Sendable (InputStream?) -> Void = { [self] stream in
                if let stream {
                    var withBody = requestBox.value
                    withBody.httpBodyStream = stream
                    startLoad(withBody, redirected: redirected)
                } else {
                    complete(error: URLError(.requestBodyStreamExhausted, url: requestBox.value.url,
                                             description: "The delegate provided no body stream for the upload."),
                             generation: nil)
                }
                resume()
            }
            let asked = sendToDelegate(.needNewBodyStream, as: (any URLSessionTaskDelegate).self) {
                $0.urlSession(session, task: self, needNewBodyStream: proceed)
            }
            if !asked { proceed(requestBox.value.httpBodyStream) }
        }
    }

    /// Finds the handler for `request` and starts it, with the response the session's cache holds
    /// for it; a request no handler accepts fails the task with `unsupportedURL`. The request's
    /// cache policy may instead serve the cached response without a handler, or fail with
    /// `resourceUnavailable` (see `URLSessionTask+Caching.swift`). `redirected`: the request
    /// follows a redirect (see ``URLSession/prepare(_:uploadBody:originalURL:redirected:)``).
    func startLoad(_ request: URLRequest, redirected: Bool = false) {
        guard let session else { return }
        let requested = session.prepare(request, uploadBody: uploadBody, originalURL: initialRequest?.url, redirected: redirected)
        guard let handler = session.resolver.resolve(requested) else {
            let scheme = requested.url?.scheme.map { "“\($0)”" } ?? "(no scheme)"
            complete(error: URLError(.unsupportedURL, url: requested.url,
                                     description: "No handler is registered for the URL scheme \(scheme)."),
                     generation: nil)
            return
        }
        // The handler class's canonical form is what it loads and what the cache is keyed by; the
        // scope of the credentials it sends decides which cached responses it may use.
        var prepared = handler.type.canonicalRequest(for: requested)
        URLCacheScope.mark(&prepared, with: session.cache == nil ? nil : handler.cacheScope(for: prepared, environment: session.environment))
        let cachedResponse: CachedURLResponse?
        switch cacheLookup(for: prepared) {
        case .load(let cached):
            cachedResponse = cached
        case .serve(let cached):
            serveCachedResponse(cached, for: prepared)
            return
        case .unavailable:
            complete(error: URLError(.resourceUnavailable, url: prepared.url,
                                     description: "Nothing is cached for this request and its cache policy forbids loading it."),
                     generation: nil)
            return
        }
        let timeouts = session.timeouts(for: prepared)
        let generation: Int? = lock.withLock {
            switch core.phase {
            case .preparing, .loading: break
            case .idle, .finishing, .done: return nil
            }
            core.generation += 1
            core.currentRequest = prepared
            core.resumedAtOffset = nil
            core.lastActivity = monotonicNanoseconds()
            core.requestTimeout = timeouts.request
            core.resourceTimeout = timeouts.resource
            core.metrics.loadStarted(request: prepared)
            return core.generation
        }
        guard let generation else { return }
        let client = TaskProtocolClient(task: self, generation: generation,
                                        configuration: session.handlerConfiguration(for: prepared, cachedResponse: cachedResponse),
                                        cache: session.cache)
        let load = ActiveLoad(instance: handler.makeInstance(task: self, cachedResponse: cachedResponse, client: client),
                              handler: handler, generation: generation)
        let started: Bool = lock.withLock {
            guard core.generation == generation else { return false }
            switch core.phase {
            case .preparing, .loading:
                core.phase = .loading(load)
                return true
            case .idle, .finishing, .done:
                return false
            }
        }
        guard started else { return }
        session.taskDidStartLoading(self)
        // A built-in handler that guards its own state starts on this thread: one thread hop less
        // per load (see ``HandlerCapabilities/concurrentStartStop``).
        load.performDirectlyIfConcurrent { $0.startLoading() }
    }

    /// A handler reported a redirect: stop it, ask the delegate, then follow or stop. A redirect a
    /// handler with a ``RedirectConfinement`` (a plugin, the http handler) reports, or the delegate's
    /// answer to it, that leaves the handler's permitted schemes fails the task with `unsupportedURL`
    /// and is not loaded.
    func handleRedirect(to request: URLRequest, response: URLResponse, generation: Int) {
        guard let session, let pipeline else { return }
        let outcome: (ActiveLoad, Int)? = lock.withLock {
            guard case .loading(let load) = core.phase, load.generation == generation else { return nil }
            core.generation += 1
            core.redirectCount += 1
            core.phase = .preparing
            core.metrics.loadFinished(response: response)
            return (load, core.redirectCount)
        }
        guard let (oldLoad, count) = outcome else { return }
        // A handler that can hand over the redirect response's own body keeps its load until the
        // delegate decides; any other handler stops now.
        let canDeliverRefusal = oldLoad.handler.capabilities.contains(.deliversRefusedRedirect)
        // A plugin's redirects lead only to its own schemes and http(s), whatever the delegate says.
        let confinement = oldLoad.handler.redirectConfinement
        let refusedProposal = confinement?.refusal(of: request.url)
        if !canDeliverRefusal || count > URLSession.maximumRedirects || refusedProposal != nil { oldLoad.stop() }
        guard count <= URLSession.maximumRedirects else {
            complete(error: URLError(.httpTooManyRedirects, url: response.url ?? request.url,
                                     description: "More than \(URLSession.maximumRedirects) redirects."),
                     generation: nil)
            return
        }
        if let refusedProposal {
            complete(error: refusedProposal, generation: nil)
            return
        }
        let boxes = UncheckedSendable((request, response))
        pipeline.enqueueAwaiting { [self] resume in
            let proceed: @Sendable (URLRequest?) -> Void = { [self] next in
                if let next {
                    if canDeliverRefusal { oldLoad.stop() }
                    if let refusal = session.resolver.refusal(ofAnswer: next, toProposed: boxes.value.0) ?? confinement?.refusal(of: next.url) {
                        complete(error: refusal, generation: nil)
                    } else if next.httpBodyStream != nil, !uploadBody.recreatesItsStream {
                        // The stream was read by the first request: the delegate must give a new one.
                        requestBodyStream(then: next, redirected: true)
                    } else {
                        startLoad(next, redirected: true)
                    }
                } else if canDeliverRefusal, reinstate(oldLoad) {
                    oldLoad.deliverRefusedRedirect()
                } else {
                    finishWithResponse(boxes.value.1)
                }
                resume()
            }
            let asked = (response as? HTTPURLResponse).map { http in
                sendToDelegate(.redirect, as: (any URLSessionTaskDelegate).self) {
                    $0.urlSession(session, task: self, willPerformHTTPRedirection: http,
                                  newRequest: boxes.value.0, completionHandler: proceed)
                }
            } ?? false
            if !asked { proceed(boxes.value.0) }
        }
    }

    /// Makes a handler whose redirect was refused the current load again, so its report of the
    /// redirect response as the final result counts. `false` if the task moved on (cancelled).
    private func reinstate(_ load: ActiveLoad) -> Bool {
        lock.withLock {
            guard case .preparing = core.phase else { return false }
            core.phase = .loading(load)
            core.generation = load.generation
            core.redirectCount -= 1
            return true
        }
    }

    private func finishWithResponse(_ response: URLResponse) {
        handleResponse(response, generation: nil)
        complete(error: nil, generation: nil)
    }
}
