internal import CCurl
import Foundation

/// The handler for `http:` and `https:` URLs, on libcurl.
///
/// Each load is one easy handle on the session's ``CurlMultiLoop``: connections are reused across
/// the session's tasks, HTTPS negotiates HTTP/2 by ALPN (HTTP/1.1 otherwise), and bodies stream —
/// responses to the task as they arrive (pausing libcurl while the consumer is behind), request
/// bodies from memory, a file or a stream. Content encodings (gzip, deflate, br, zstd) are decoded.
///
/// Redirects are not followed by libcurl: they go back to the task, which asks the delegate
/// (``HTTPRedirectRequest`` builds the proposed request). A 401 or 407 becomes an authentication
/// challenge (``HTTPAuthentication``); a credential retries the request within this instance.
///
/// Every method guards the handler's state with its lock, so the task starts, stops and resumes it
/// directly from any thread (``HandlerCapabilities/concurrentStartStop`` in its rows).
final class HTTPURLProtocol: BuiltInURLProtocol, CurlTransferDelegate, @unchecked Sendable {

    /// Where one load is.
    enum State { case idle, running, redirected, challenging, waiting, stopped, finished }

    let lock = Lock()
    private var state = State.idle
    private var transfer: CurlTransfer?
    private var loop: CurlMultiLoop?
    private var responseDelivered = false
    private let uploadProgress = CurlUploadProgress()
    /// Pauses the running transfer while the task cannot take more body, and wakes it.
    private let flowControl = CurlFlowControl()
    private var started = Date()
    /// The credential the current attempt sends, and what the authentication exchange remembers.
    var authentication = HTTPAuthentication()
    /// The server the delegate accepted after a server-trust challenge, if any.
    private var acceptedServer: TLSServerTrust?
    /// The client certificate the delegate chose, presented from then on.
    private var clientCertificate: ClientCertificateFiles?
    /// The delegate chose to go on without a client certificate: later attempts do not ask again.
    private var declinedClientCertificate = false
    /// Notices the server's certificate request in the current attempt's handshake (https, while no
    /// certificate was chosen or declined).
    private var certificateRequest: TLSClientCertificateRequest?
    /// A redirect reported at the end of its transfer, with the start of its body (kept in case
    /// the delegate refuses it and the 3xx becomes the final response).
    private var pendingRedirect: (request: URLRequest, response: HTTPURLResponse)?
    private var redirectBody = Data()
    /// Body bytes handed to the client in this attempt (after content decoding).
    private var deliveredBytes: Int64 = 0
    /// Connection attempts made while waiting for connectivity.
    private var connectivityAttempts = 0
    /// A new body stream from the delegate, for an attempt after the first (the first stream is used).
    private var replacementBodyStream: InputStream?
    /// The revalidation of a stored response, if this load is one (`HTTPURLProtocol+Caching.swift`).
    let cacheExchange = HTTPCacheExchange()
    /// What the current attempt sends that ties its response to a user (for the storage policy).
    var sentCredentials = HTTPCacheCredentials()

    /// Every http and https request: one whose URL has no host is taken too, and fails in
    /// ``startLoading()`` with `badURL` saying so (as FoundationNetworking's "HTTP URL must have a
    /// host"), rather than with `unsupportedURL` for want of a handler.
    override class func canInit(with request: URLRequest) -> Bool {
        guard let scheme = request.url?.scheme?.lowercased() else { return false }
        return scheme == "http" || scheme == "https"
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    /// The digest of the cookies `request` will send (``HTTPCacheCredentials/scope(ofCookie:)``), if any.
    override class func cacheScope(for request: URLRequest, environment: HandlerEnvironment) -> String? {
        HTTPCacheCredentials.scope(ofCookie: HTTPCookieHandling.sentCookieHeader(for: request, environment: environment))
    }

    /// The load's configuration, which the client was made with.
    let configuration: HandlerConfiguration
    /// The session's stores and settings (``HandlerConfiguration/environment``).
    var environment: HandlerEnvironment { configuration.environment }

    required init(request: URLRequest, cachedResponse: CachedURLResponse?, client: (any URLProtocolClient)?) {
        configuration = (client as? BuiltInHandlerClient)?.configuration ?? .standalone()
        super.init(request: request, cachedResponse: cachedResponse, client: client)
    }

    override func startLoading() {
        if (request.url?.host ?? "").isEmpty {
            fail(URLError(.badURL, url: request.url, description: "The URL has no host; an http or https URL must name one."),
                 expecting: .idle)
            return
        }
        if let refusal = HTTPBodilessMethods.refusal(for: request) {
            fail(refusal, expecting: .idle)
            return
        }
        if answerFromCacheIfFresh() { return }
        startAttempt(expecting: .idle)
    }

    /// Starts a transfer for the request with the current credential; `expected` is the state the
    /// handler must be in (idle at first, challenging for a retry).
    func startAttempt(expecting expected: State) {
        guard let url = request.url else { return }
        let environment = self.environment
        guard let loop = CurlMultiLoop.shared(in: environment), let transfer = CurlTransfer(delegate: self, pool: loop.httpHandles) else {
            fail(URLError(.cannotLoadFromNetwork, url: url, description: "libcurl could not be initialised, or the session was invalidated."), expecting: expected)
            return
        }
        do {
            var outgoing = cacheExchange.outgoingRequest(for: request)
            if let stream = lock.withLock({ () -> InputStream? in
                defer { replacementBodyStream = nil }
                return replacementBodyStream
            }) {
                outgoing.httpBodyStream = stream
            }
            let cookie = try HTTPTransferConfiguration.configure(transfer, for: outgoing, environment: environment)
            authentication.apply(to: transfer)
            let remembered = TLSAcceptedServers.shared(in: environment)?.server(for: url)
            lock.withLock { acceptedServer ?? remembered }?.apply(to: transfer)
            if let remembered { lock.withLock { if acceptedServer == nil { acceptedServer = remembered } } }
            let files = lock.withLock { clientCertificate }
            if let files { HTTPClientCertificate.apply(files, to: transfer) }
            let authorizes = HTTPCacheCredentials.requestAuthorizes(outgoing) || authentication.sendsServerCredential || files != nil
            lock.withLock { sentCredentials = HTTPCacheCredentials(authorizes: authorizes, cookie: cookie) }
        } catch {
            fail(error, expecting: expected)
            return
        }
        let watchCertificateRequest = url.scheme?.lowercased() == "https"
            && lock.withLock { clientCertificate == nil && !declinedClientCertificate }
        let certificateRequest = watchCertificateRequest ? TLSClientCertificateRequest() : nil
        certificateRequest?.install(on: transfer)
        let proceed: Bool = lock.withLock {
            guard state == expected else { return false }
            state = .running
            self.certificateRequest = certificateRequest
            self.transfer = transfer
            self.loop = loop
            uploadProgress.reset()
            flowControl.reset()
            responseDelivered = false
            deliveredBytes = 0
            started = Date()
            return true
        }
        if proceed { loop.add(transfer) }
    }

    private func fail(_ error: URLError, expecting expected: State) {
        let proceed: Bool = lock.withLock {
            guard state == expected else { return false }
            state = .finished
            return true
        }
        if proceed { client?.urlProtocol(self, didFailWithError: error) }
    }

    override func stopLoading() {
        let (transfer, loop): (CurlTransfer?, CurlMultiLoop?) = lock.withLock {
            if state != .finished { state = .stopped }
            defer { self.transfer = nil; self.loop = nil }
            return (self.transfer, self.loop)
        }
        transfer?.abandon()
        if let transfer, let loop { loop.remove(transfer) }
    }

    override func resumeProducing() {
        guard flowControl.wake() else { return }
        let (transfer, loop) = lock.withLock { (self.transfer, self.loop) }
        if let transfer, let loop { loop.unpause(transfer) }
    }

    // MARK: CurlTransferDelegate (loop thread)

    func transfer(_ transfer: CurlTransfer, didReceiveHead head: CurlResponseHead) {
        guard lock.withLock({ state == .running }), let requestURL = request.url else { return }
        let url = transfer.effectiveURL ?? requestURL
        // The parser gave the well-known names their usual capitalisation already.
        let response = HTTPURLResponse(url: url, statusCode: head.statusCode, httpVersion: head.httpVersion, canonicalFields: head.fields)
        let environment = self.environment
        HTTPCookieHandling.store(from: response, for: request, environment: environment)
        let proxy = head.statusCode == 407 ? proxyEndpoint(of: transfer, for: requestURL, environment: environment) : nil
        // Every head goes to the authentication exchange: a later one ends a challenge that a 401/407
        // libcurl answered itself (Digest, NTLM, Negotiate) began.
        if authentication.beginChallenge(for: response, request: request, environment: environment, proxy: proxy) {
            // The body of the 401/407 is kept until the delegate decides; nothing is delivered yet.
            return
        }
        if acceptNotModified(response) {
            return // the stored response is reported when the transfer ends
        }
        if let redirect = HTTPRedirectRequest.make(after: response, for: request) {
            lock.withLock {
                state = .redirected
                pendingRedirect = (redirect, response)
                redirectBody = Data()
            }
            return
        }
        deliver(response)
    }

    /// The proxy a transfer went through: the one `connectionProxyDictionary` names, or else the
    /// peer libcurl connected to (a proxy from the environment).
    private func proxyEndpoint(of transfer: CurlTransfer, for url: URL, environment: HandlerEnvironment) -> (host: String, port: Int)? {
        if let dictionary = environment.proxyDictionary, let proxy = HTTPProxyConfiguration.proxy(for: url, in: dictionary) {
            return (proxy.host, proxy.port)
        }
        guard let address = transfer.info(string: CURLINFO_PRIMARY_IP), !address.isEmpty,
              let port = transfer.info(long: CURLINFO_PRIMARY_PORT), port > 0 else { return nil }
        return (address, port)
    }

    /// Passes the final response to the client, with resume information for download tasks.
    func deliver(_ response: HTTPURLResponse) {
        if let builtIn = client as? BuiltInHandlerClient {
            if let resume = ResumeRequest.parameters(of: request),
               let total = HTTPResumeSupport.continuation(of: response, at: resume.offset) {
                builtIn.didResume(atOffset: resume.offset, expectedTotalBytes: total)
            }
            if (200...299).contains(response.statusCode), let validator = HTTPResumeSupport.validator(of: response) {
                builtIn.setResumeValidator(validator)
            }
        }
        lock.withLock { responseDelivered = true }
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: cacheStoragePolicy(for: response))
    }

    func transfer(_ transfer: CurlTransfer, didReceive bytes: UnsafeRawBufferPointer) -> Bool {
        if authentication.isChallenging {
            authentication.bufferFailureBody(bytes)
            return true
        }
        let current: State = lock.withLock {
            if state == .redirected, redirectBody.count < HTTPAuthentication.failureBodyLimit {
                redirectBody.append(contentsOf: bytes.prefix(HTTPAuthentication.failureBodyLimit - redirectBody.count))
            }
            return state
        }
        guard current == .running else { return true }
        if flowControl.shouldPause(for: client) { return false }
        lock.withLock { deliveredBytes += Int64(bytes.count) }
        client?.urlProtocol(self, didLoad: Data(bytes))
        return true
    }

    func transfer(_ transfer: CurlTransfer, didSend totalBytesSent: Int64, of expected: Int64) {
        uploadProgress.report(totalBytesSent: totalBytesSent, expected: expected, to: client)
    }

    func transfer(_ transfer: CurlTransfer, didFinishWith result: CURLcode) {
        let authChallenge = (authentication.isChallenging && result == CURLE_OK) || beginTunnelChallenge(transfer, result: result)
        // libcurl had to send the body again (a reused connection was gone) and the app's stream
        // cannot go back: the delegate is asked for a new stream, as after a challenge.
        let resendBody = result == CURLE_SEND_FAIL_REWIND && !authChallenge
        if let redirect = takeRedirectOnFinish(transfer) {
            client?.urlProtocol(self, wasRedirectedTo: redirect.request, redirectResponse: redirect.response)
            return
        }
        let (proceed, delivered, start, trustChallenge, certificateChallenge): (Bool, Bool, Date, Bool, Bool) = lock.withLock {
            guard state == .running else { return (false, false, started, false, false) }
            let trustChallenge = result == CURLE_PEER_FAILED_VERIFICATION && acceptedServer == nil && !responseDelivered
            // The server asked for a certificate in the handshake (which the watch then ended), or
            // refused a handshake without one.
            let certificateRequested = result != CURLE_OK && certificateRequest?.wasRequested == true
            let certificateChallenge = clientCertificate == nil && !declinedClientCertificate && !responseDelivered
                && (certificateRequested || HTTPClientCertificate.serverRequiresCertificate(result: result, detail: transfer.errorDetail))
            certificateRequest = nil
            state = authChallenge || trustChallenge || certificateChallenge || resendBody ? .challenging : .finished
            if !authChallenge && !trustChallenge && !responseDelivered && environment.waitsForConnectivity
                && (result == CURLE_COULDNT_CONNECT || result == CURLE_COULDNT_RESOLVE_HOST) {
                state = .waiting
            }
            self.transfer = nil
            self.loop = nil
            return (true, responseDelivered, started, trustChallenge, certificateChallenge)
        }
        guard proceed else { return }
        reportMetrics(of: transfer, started: start)
        let url = request.url
        if lock.withLock({ state == .waiting }) {
            waitForConnectivity()
        } else if resendBody {
            retryAfterChallenge()
        } else if authChallenge {
            presentChallenge()
        } else if certificateChallenge {
            presentClientCertificateChallenge()
        } else if trustChallenge {
            presentTrustChallenge(error: CurlErrorMapping.error(for: result, url: url, detail: transfer.errorDetail),
                                  detail: transfer.errorDetail)
        } else if result == CURLE_OK && delivered {
            client?.urlProtocolDidFinishLoading(self)
        } else if result == CURLE_OK, finishRevalidationIfAnswered() {
            // A 304: the stored response was reported.
        } else {
            let certificate = lock.withLock {
                HTTPTransferFailure.CertificateState(presented: clientCertificate != nil, declined: declinedClientCertificate)
            }
            client?.urlProtocol(self, didFailWithError: HTTPTransferFailure.error(for: result, of: transfer, url: url,
                                                                                  delivered: delivered, certificate: certificate))
        }
    }

    /// A proxy refused to open a tunnel with 407: starts the challenge such a response raises.
    /// libcurl keeps the proxy's answer to CONNECT to itself (`CURLOPT_SUPPRESS_CONNECT_HEADERS`), so
    /// the schemes come from `CURLINFO_PROXYAUTH_AVAIL` and the realm is not known.
    private func beginTunnelChallenge(_ transfer: CurlTransfer, result: CURLcode) -> Bool {
        guard result != CURLE_OK, let url = request.url, transfer.info(long: CURLINFO_HTTP_CONNECTCODE) == 407,
              lock.withLock({ state == .running && !responseDelivered }) else { return false }
        let available = transfer.info(long: CURLINFO_PROXYAUTH_AVAIL) ?? 0
        let schemes = [(courier_auth_negotiate, "Negotiate"), (courier_auth_ntlm, "NTLM"), (courier_auth_digest, "Digest"),
                       (courier_auth_basic, "Basic")].filter { available & $0.0 != 0 }.map(\.1)
        guard !schemes.isEmpty else { return false }
        let response = HTTPURLResponse(url: url, statusCode: 407, httpVersion: "HTTP/1.1",
                                       fields: HTTPHeaderFields(["Proxy-Authenticate": schemes.joined(separator: ", ")]))
        return authentication.beginChallenge(for: response, request: request, environment: environment,
                                             proxy: proxyEndpoint(of: transfer, for: url, environment: environment))
    }

    /// Sends what libcurl measured (and the decoded body size) to the task's metrics.
    private func reportMetrics(of transfer: CurlTransfer, started: Date) {
        guard let builtIn = client as? BuiltInHandlerClient else { return }
        let measured = CurlTransferMetrics(transfer, started: started)
        let decoded = lock.withLock { deliveredBytes }
        builtIn.didCollectTransactionMetrics {
            measured.apply(to: &$0)
            $0.countOfResponseBodyBytesAfterDecoding = decoded
        }
    }

    /// The redirect this transfer carried, once its body has been read; `nil` for other transfers.
    private func takeRedirectOnFinish(_ transfer: CurlTransfer) -> (request: URLRequest, response: HTTPURLResponse)? {
        let (redirect, start): ((request: URLRequest, response: HTTPURLResponse)?, Date) = lock.withLock {
            guard state == .redirected, let pending = pendingRedirect else { return (nil, started) }
            self.transfer = nil
            self.loop = nil
            return (pending, started)
        }
        guard let redirect else { return nil }
        reportMetrics(of: transfer, started: start)
        return redirect
    }

    /// The delegate refused the redirect: its response and body become the result.
    override func deliverRefusedRedirect() {
        let outcome: (HTTPURLResponse, Data)? = lock.withLock {
            guard state == .redirected, let pending = pendingRedirect else { return nil }
            state = .finished
            pendingRedirect = nil
            responseDelivered = true
            defer { redirectBody = Data() }
            return (pending.response, redirectBody)
        }
        guard let (response, body) = outcome else { return }
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        if !body.isEmpty { client?.urlProtocol(self, didLoad: body) }
        client?.urlProtocolDidFinishLoading(self)
    }

    // MARK: Waiting for connectivity

    /// Tells the task once, then tries to connect again after a growing pause (0.25 s doubling up to
    /// 5 s). The task's resource timeout ends the wait.
    private func waitForConnectivity() {
        (client as? BuiltInHandlerClient)?.taskIsWaitingForConnectivity()
        let attempt: Int = lock.withLock {
            connectivityAttempts += 1
            return connectivityAttempts
        }
        let delay = min(0.25 * pow(2, Double(min(attempt - 1, 10))), 5)
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in
            self?.startAttempt(expecting: .waiting)
        }
    }

    // MARK: Client certificates

    /// Asks the delegate for a client certificate the server asked for. A certificate is presented
    /// from the next attempt on; default handling, rejecting the space or no credential go on
    /// without one (the server decides), cancelling cancels the load.
    private func presentClientCertificateChallenge() {
        guard let url = request.url, let host = url.host else { return }
        let error = URLError(.clientCertificateRequired, url: url, description: "The server requires a client certificate.")
        let space = URLProtectionSpace(host: host, port: url.port ?? 443, protocol: url.scheme?.lowercased(), realm: nil,
                                       authenticationMethod: NSURLAuthenticationMethodClientCertificate)
        let sender = HandlerChallengeSender { [weak self] answer in
            guard let self else { return }
            switch answer {
            case .use(let credential):
                let retry: Bool = lock.withLock {
                    guard state == .challenging else { return false }
                    if let files = credential.clientCertificate {
                        clientCertificate = files
                    } else {
                        declinedClientCertificate = true
                    }
                    return true
                }
                if retry { retryAfterChallenge() }
            case .cancel:
                failChallenge(with: URLError(.cancelled, url: url, description: "The client-certificate challenge was cancelled."))
            case .withoutCredential, .defaultHandling, .rejectProtectionSpace:
                let retry: Bool = lock.withLock {
                    guard state == .challenging else { return false }
                    declinedClientCertificate = true
                    return true
                }
                if retry { retryAfterChallenge() }
            }
        }
        let challenge = URLAuthenticationChallenge(protectionSpace: space, proposedCredential: nil, previousFailureCount: 0,
                                                   failureResponse: nil, error: error, sender: sender)
        client?.urlProtocol(self, didReceive: challenge)
    }

    // MARK: Server trust

    /// Asks the delegate whether to trust a server whose certificate failed verification.
    private func presentTrustChallenge(error: URLError, detail: String?) {
        guard let url = request.url else { return }
        TLSServerTrustChallenge.present(for: url, error: error, detail: detail, environment: environment,
                                        proxy: HTTPProxyConfiguration.curlProxy(for: url, dictionary: environment.proxyDictionary),
                                        proxyCredential: authentication.proxyCredential,
                                        deliver: { [weak self] challenge in
                                            guard let self else { return }
                                            client?.urlProtocol(self, didReceive: challenge)
                                        },
                                        decided: { [weak self] outcome in self?.trustDecided(outcome) })
    }

    private func trustDecided(_ outcome: TLSServerTrustChallenge.Outcome) {
        switch outcome {
        case .accept(let accepted):
            let retry: Bool = lock.withLock {
                guard state == .challenging else { return false }
                acceptedServer = accepted
                return true
            }
            if retry { retryAfterChallenge() }
        case .fail(let error):
            failChallenge(with: error)
        }
    }

    /// Starts the next attempt after a challenge (or after libcurl could not send a streamed body
    /// again). A streamed body was used by the attempt before, so the delegate is asked for a new
    /// stream first (as Apple's `needNewBodyStream` documents).
    private func retryAfterChallenge() {
        CurlBodyStreamRetry.prepare(for: request, client: client, proceed: { [weak self] stream in
            guard let self else { return }
            lock.withLock { replacementBodyStream = stream }
            startAttempt(expecting: .challenging)
        }, fail: { [weak self] error in self?.failChallenge(with: error) })
    }

    private func failChallenge(with error: URLError) {
        let proceed: Bool = lock.withLock {
            guard state == .challenging else { return false }
            state = .finished
            return true
        }
        if proceed { client?.urlProtocol(self, didFailWithError: error) }
    }

    // MARK: Authentication challenges

    private func presentChallenge() {
        guard let challenge = authentication.makeChallenge(sender: HandlerChallengeSender { [weak self] answer in
            self?.answer(answer)
        }) else {
            finishWithFailureResponse()
            return
        }
        client?.urlProtocol(self, didReceive: challenge)
    }

    private func answer(_ answer: HandlerChallengeSender.Answer) {
        guard lock.withLock({ state == .challenging }) else { return }
        switch authentication.resolve(answer, environment: environment) {
        case .retry:
            retryAfterChallenge()
        case .nextSpace:
            presentChallenge()
        case .giveUp:
            finishWithFailureResponse()
        case .cancel:
            failChallenge(with: URLError(.cancelled, url: request.url, description: "The authentication challenge was cancelled."))
        }
    }

    /// Delivers the 401/407 response and its body as the task's result.
    private func finishWithFailureResponse() {
        guard let (response, body) = authentication.takeFailure(),
              lock.withLock({ () -> Bool in
                  guard state == .challenging else { return false }
                  state = .finished
                  return true
              }) else { return }
        lock.withLock { responseDelivered = true }
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        if !body.isEmpty { client?.urlProtocol(self, didLoad: body) }
        client?.urlProtocolDidFinishLoading(self)
    }
}
