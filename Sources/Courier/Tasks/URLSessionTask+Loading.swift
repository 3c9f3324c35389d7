import Foundation

// Starting handlers: the first load, loads after redirects, and the body stream an upload needs.
extension URLSessionTask {
    /// The most redirects a task follows before failing with `httpTooManyRedirects`.
    static let maximumRedirects = 16

    /// Called once when the task is first resumed.
    func beginLoading() {
        guard context != nil else { return }
        if let creationFailure {
            complete(error: creationFailure, generation: nil)
            return
        }
        // A stream task has no request and no handler: it opens its own connection.
        if let streamTask = self as? URLSessionStreamTask {
            streamTask.beginStream()
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
            guard context?.resolver.resumesDownloads(of: resume.url) == true else {
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
        guard let session else { return }
        let requestBox = UncheckedSendable(request)
        enqueueAwaiting { [self] resume in
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
    /// follows a redirect (see ``SessionSettings/prepare(_:uploadBody:originalURL:redirected:)``).
    /// Everything here comes from the task's ``TaskSessionContext``: the session is not asked.
    func startLoad(_ request: URLRequest, redirected: Bool = false) {
        guard let context else { return }
        let requested = requestForHandler(context.settings.prepare(request, uploadBody: uploadBody, originalURL: initialRequest?.url,
                                                                   redirected: redirected))
        guard let handler = context.resolver.resolve(requested) else {
            let scheme = requested.url?.scheme.map { "“\($0)”" } ?? "(no scheme)"
            complete(error: URLError(.unsupportedURL, url: requested.url,
                                     description: "No handler is registered for the URL scheme \(scheme)."),
                     generation: nil)
            return
        }
        // The handler class's canonical form is what it loads and what the cache is keyed by; the
        // scope of the credentials it sends decides which cached responses it may use.
        var prepared = handler.type.canonicalRequest(for: requested)
        URLCacheScope.mark(&prepared, with: context.cache == nil ? nil : handler.cacheScope(for: prepared, environment: context.environment))
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
        let timeouts = context.settings.timeouts(for: prepared)
        let generation: Int? = lock.withLock {
            guard let generation = core.machine.loadStarting() else { return nil }
            core.currentRequest = prepared
            core.resumedAtOffset = nil
            core.lastActivity = monotonicNanoseconds()
            core.requestTimeout = timeouts.request
            core.resourceTimeout = timeouts.resource
            core.metrics.loadStarted(request: prepared)
            return generation
        }
        guard let generation else { return }
        let client = TaskProtocolClient(task: self, generation: generation,
                                        configuration: context.handlerConfiguration(for: prepared, cachedResponse: cachedResponse,
                                                                                    task: identifier),
                                        cache: context.cache)
        let load = ActiveLoad(instance: handler.makeInstance(task: self, cachedResponse: cachedResponse, client: client),
                              handler: handler)
        guard lock.withLock({ core.machine.loadStarted(load, generation: generation) }) else { return }
        context.owner.taskDidStartLoading(self)
        // A built-in handler that guards its own state starts on this thread: one thread hop less
        // per load (see ``HandlerCapabilities/concurrentStartStop``).
        load.performDirectlyIfConcurrent { $0.startLoading() }
    }

    /// A handler reported a redirect: ask the delegate, then follow or stop. The load stops now
    /// unless it can deliver the redirect response should the delegate refuse
    /// (``HandlerCapabilities/deliversRefusedRedirect``); the state machine keeps it meanwhile. A
    /// redirect a handler with a ``RedirectConfinement`` (a plugin, the http handler) reports, or the
    /// delegate's answer to it, that leaves the handler's permitted schemes fails the task with
    /// `unsupportedURL` and is not loaded.
    func handleRedirect(to request: URLRequest, response: URLResponse, generation: Int) {
        guard let session else { return }
        enum Reporting { case stale, forward(URLSessionDownloadTask), current(ActiveLoad) }
        let reporting: Reporting = lock.withLock {
            switch core.machine.route(generation) {
            case .stale: return .stale
            case .forward(let successor): return .forward(successor)
            case .current: return core.machine.currentLoad.map(Reporting.current) ?? .stale
            }
        }
        let load: ActiveLoad
        switch reporting {
        case .stale:
            return
        case .forward(let successor):
            successor.handleRedirect(to: request, response: response, generation: generation)
            return
        case .current(let current):
            load = current
        }
        // A plugin's redirects lead only to its own schemes and http(s), whatever the delegate says.
        let confinement = load.handler.redirectConfinement
        let refusedProposal = confinement?.refusal(of: request.url)
        let canDeliverRefusal = load.handler.capabilities.contains(.deliversRefusedRedirect)
        enum Outcome { case ignore, fail(URLError), ask(stop: ActiveLoad?) }
        let outcome: Outcome = lock.withLock {
            guard core.machine.isCurrent(generation) else { return .ignore }
            core.redirectCount += 1
            core.metrics.loadFinished(response: response)
            if core.redirectCount > Self.maximumRedirects {
                return .fail(URLError(.httpTooManyRedirects, url: response.url ?? request.url,
                                      description: "More than \(Self.maximumRedirects) redirects."))
            }
            if let refusedProposal { return .fail(refusedProposal) }
            guard case .redirect(let stop) = core.machine.redirect(generation: generation, canDeliverRefusal: canDeliverRefusal) else {
                return .ignore
            }
            return .ask(stop: stop)
        }
        switch outcome {
        case .ignore:
            return
        case .fail(let error):
            // Still the current load: ending the task stops it.
            complete(error: error, generation: generation)
            return
        case .ask(let stop):
            stop?.stop()
        }
        let boxes = UncheckedSendable((request, response))
        enqueueAwaiting { [self] resume in
            let proceed: @Sendable (URLRequest?) -> Void = { [self] next in
                if let next {
                    followRedirect(to: next, proposed: boxes.value.0, confinement: confinement)
                } else {
                    refuseRedirect(response: boxes.value.1)
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

    /// The delegate answered a redirect with `next`: load it, or fail the task when it may not be
    /// loaded (the kept load, if any, stops either way).
    private func followRedirect(to next: URLRequest, proposed: URLRequest, confinement: RedirectConfinement?) {
        if let refusal = context?.resolver.refusal(ofAnswer: next, toProposed: proposed) ?? confinement?.refusal(of: next.url) {
            complete(error: refusal, generation: nil)
            return
        }
        guard case .follow(let stop) = lock.withLock({ core.machine.redirectFollowed() }) else { return }
        stop?.stop()
        if next.httpBodyStream != nil, !uploadBody.recreatesItsStream {
            // The stream was read by the first request: the delegate must give a new one.
            requestBodyStream(then: next, redirected: true)
        } else {
            startLoad(next, redirected: true)
        }
    }

    /// The delegate refused a redirect: its response is the result, delivered by the load the state
    /// machine kept, or by the task itself. It does not count as a redirect.
    private func refuseRedirect(response: URLResponse) {
        let refusal: Machine.RefusalAction = lock.withLock {
            let refusal = core.machine.redirectRefused()
            if case .ignore = refusal {} else { core.redirectCount -= 1 }
            return refusal
        }
        switch refusal {
        case .ignore:
            return
        case .deliverRefusal(let load):
            load.deliverRefusedRedirect()
        case .finishWithRedirectResponse:
            handleResponse(response, generation: nil)
            complete(error: nil, generation: nil)
        }
    }
}
