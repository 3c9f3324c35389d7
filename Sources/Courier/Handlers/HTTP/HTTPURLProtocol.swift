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
/// The attempts themselves (start, back-pressure, stop, end, retry, metrics) are a ``CurlLoad``;
/// what follows the end of a transfer is ``HTTPTransferOutcome/decide(_:)``. Every method guards the
/// handler's state with its locks, so the task starts, stops and resumes it directly from any
/// thread (``HandlerCapabilities/concurrentStartStop`` in its rows).
final class HTTPURLProtocol: BuiltInURLProtocol, CurlLoadHandler, @unchecked Sendable {

    /// Where the body of the current attempt's response goes, as its last head decided.
    enum BodyRoute {
        /// To the client (the response was delivered).
        case client
        /// Kept as the 401/407's body until the delegate answers the challenge.
        case challenge
        /// Kept as the redirect's body, in case the delegate refuses the redirect.
        case redirect
    }

    /// Guards the handler's own state below; a leaf.
    let lock = Lock()
    /// The attempts of this load and where the load is.
    let load = CurlLoad(headerMode: .http, pooled: true)
    /// Read and written under ``lock`` only (a check per access by the runtime adds nothing).
    @exclusivity(unchecked) private var bodyRoute = BodyRoute.client
    /// The credential the current attempt sends, and what the authentication exchange remembers.
    var authentication = HTTPAuthentication()
    /// The server the delegate accepted after a server-trust challenge, if any.
    var acceptedServer: TLSServerTrust?
    /// The client certificate the delegate chose, presented from then on.
    var clientCertificate: ClientCertificateFiles?
    /// The delegate chose to go on without a client certificate: later attempts do not ask again.
    var declinedClientCertificate = false
    /// Notices the server's certificate request in the current attempt's handshake (https, while no
    /// certificate was chosen or declined).
    private var certificateRequest: TLSClientCertificateRequest?
    /// A redirect reported at the end of its transfer, with the start of its body (kept in case
    /// the delegate refuses it and the 3xx becomes the final response).
    private var pendingRedirect: (request: URLRequest, response: HTTPURLResponse)?
    private var redirectBody = Data()
    /// Connection attempts made while waiting for connectivity.
    private var connectivityAttempts = 0
    /// The revalidation of a stored response, if this load is one (`HTTPURLProtocol+Caching.swift`).
    let cacheExchange = HTTPCacheExchange()
    /// What the current attempt sends that ties its response to a user (for the storage policy).
    var sentCredentials = HTTPCacheCredentials()

    /// Every http and https request: one whose URL has no host is taken too, and fails in
    /// ``startLoading()`` with `badURL` saying so (as FoundationNetworking's "HTTP URL must have a
    /// host"), rather than with `unsupportedURL` for want of a handler.
    override class func canInit(with request: URLRequest) -> Bool {
        guard let url = request.url else { return false }
        return HTTPSchemeCheck.isHTTP(url) || HTTPSchemeCheck.isHTTPS(url)
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

    /// `client` as the task's client, cast once here (``CurlLoadHandler``).
    let builtInClient: (any BuiltInHandlerClient)?

    required init(request: URLRequest, cachedResponse: CachedURLResponse?, client: (any URLProtocolClient)?) {
        let builtIn = client as? BuiltInHandlerClient
        builtInClient = builtIn
        configuration = builtIn?.configuration ?? .standalone()
        super.init(request: request, cachedResponse: cachedResponse, client: client)
    }

    override func startLoading() {
        if (request.url?.host ?? "").isEmpty {
            load.fail(URLError(.badURL, url: request.url, description: "The URL has no host; an http or https URL must name one."),
                      for: self, from: .idle)
            return
        }
        if let refusal = HTTPBodilessMethods.refusal(for: request) {
            load.fail(refusal, for: self, from: .idle)
            return
        }
        if answerFromCacheIfFresh() { return }
        startAttempt(expecting: .idle)
    }

    /// Starts a transfer for the request with the current credentials when the load is at
    /// `expected`; `bodyStream` replaces a streamed body the attempt before used.
    func startAttempt(expecting expected: CurlLoad.Stage, bodyStream: InputStream? = nil) {
        guard let url = request.url else { return }
        let environment = self.environment
        load.start(expecting: expected, for: self, environment: environment) { transfer throws(URLError) in
            var outgoing = cacheExchange.outgoingRequest(for: request)
            if let bodyStream { outgoing.httpBodyStream = bodyStream }
            let cookie = try HTTPTransferConfiguration.configure(transfer, for: outgoing, configuration: configuration)
            if HTTPUpgrade.mayHandOver(outgoing) { CurlUpgradeSocket.prepare(transfer) }
            authentication.apply(to: transfer)
            let remembered = TLSAcceptedServers.shared(in: environment)?.server(for: url)
            let (accepted, files, declined): (TLSServerTrust?, ClientCertificateFiles?, Bool) = lock.withLock {
                if acceptedServer == nil, let remembered { acceptedServer = remembered }
                return (acceptedServer, clientCertificate, declinedClientCertificate)
            }
            accepted?.apply(to: transfer)
            if let files { HTTPClientCertificate.apply(files, to: transfer) }
            let authorizes = HTTPCacheCredentials.requestAuthorizes(outgoing) || authentication.sendsServerCredential || files != nil
            let watchCertificateRequest = files == nil && !declined && HTTPSchemeCheck.isHTTPS(url)
            let certificateRequest = watchCertificateRequest ? TLSClientCertificateRequest() : nil
            certificateRequest?.install(on: transfer)
            lock.withLock {
                sentCredentials = HTTPCacheCredentials(authorizes: authorizes, cookie: cookie)
                self.certificateRequest = certificateRequest
                bodyRoute = .client
            }
        }
    }

    override func stopLoading() {
        load.stop()
    }

    override func resumeProducing() {
        load.resumeProducing()
    }

    /// `.becomeStream`: an upgraded `http:` connection goes to a stream task (``HTTPUpgrade``).
    override func handOverConnection(after response: URLResponse,
                                     completion: @escaping @Sendable (Result<HandedOverConnection, URLError>) -> Void) {
        handOverUpgradedConnection(after: response, completion: completion)
    }

    // MARK: CurlTransferDelegate (loop thread)

    func transfer(_ transfer: CurlTransfer, didReceiveHead head: CurlResponseHead) {
        // After a redirect's head only its body counts. (A head read while the load was being stopped
        // is not delivered: ``CurlLoad/respond(with:policy:to:)`` checks.)
        let current = lock.withLock { bodyRoute }
        guard current != .redirect, let requestURL = request.url else { return }
        let url = transfer.effectiveURL ?? requestURL
        // The parser gave the well-known names their usual capitalisation already.
        let response = HTTPURLResponse(url: url, statusCode: head.statusCode, httpVersion: head.httpVersion, canonicalFields: head.fields)
        let environment = self.environment
        HTTPCookieHandling.store(from: response, for: request, environment: environment)
        let proxy = head.statusCode == 407 ? Self.proxyEndpoint(of: transfer, for: requestURL, environment: environment) : nil
        // Every head goes to the authentication exchange: a later one ends a challenge that a 401/407
        // libcurl answered itself (Digest, NTLM, Negotiate) began. The body of a 401/407 is kept
        // until the delegate decides; nothing is delivered yet.
        let challenged = authentication.beginChallenge(for: response, request: request, environment: environment, proxy: proxy)
        // A 304 to this load's revalidation: the stored response is reported when the transfer ends.
        let notModified = !challenged && acceptNotModified(response)
        let redirect = challenged || notModified ? nil : HTTPRedirectRequest.make(after: response, for: request)
        let route: BodyRoute = challenged ? .challenge : redirect == nil ? .client : .redirect
        if route != current {
            lock.withLock {
                bodyRoute = route
                if let redirect {
                    pendingRedirect = (redirect, response)
                    redirectBody = Data()
                }
            }
        }
        if route == .client && !notModified { deliver(response) }
    }

    /// The proxy a transfer went through: the one `connectionProxyDictionary` names, or else the
    /// peer libcurl connected to (a proxy from the environment).
    static func proxyEndpoint(of transfer: CurlTransfer, for url: URL, environment: HandlerEnvironment) -> (host: String, port: Int)? {
        if let dictionary = environment.proxyDictionary, let proxy = HTTPProxyConfiguration.proxy(for: url, in: dictionary) {
            return (proxy.host, proxy.port)
        }
        guard let address = transfer.info(string: CURLINFO_PRIMARY_IP), !address.isEmpty,
              let port = transfer.info(long: CURLINFO_PRIMARY_PORT), port > 0 else { return nil }
        return (address, port)
    }

    /// Passes the final response to the client, with resume information for download tasks.
    func deliver(_ response: HTTPURLResponse) {
        if let builtIn = builtInClient {
            if let resume = ResumeRequest.parameters(of: request),
               let total = HTTPResumeSupport.continuation(of: response, at: resume.offset) {
                builtIn.didResume(atOffset: resume.offset, expectedTotalBytes: total)
            }
            if (200...299).contains(response.statusCode), let validator = HTTPResumeSupport.validator(of: response) {
                builtIn.setResumeValidator(validator)
            }
        }
        load.respond(with: response, policy: cacheStoragePolicy(for: response), to: self)
    }

    func transfer(_ transfer: CurlTransfer, didReceive bytes: UnsafeRawBufferPointer) -> Bool {
        let route: BodyRoute = lock.withLock {
            if bodyRoute == .redirect, redirectBody.count < HTTPAuthentication.failureBodyLimit {
                redirectBody.append(contentsOf: bytes.prefix(HTTPAuthentication.failureBodyLimit - redirectBody.count))
            }
            return bodyRoute
        }
        switch route {
        case .client:
            return load.deliverBody(bytes, to: self)
        case .challenge:
            authentication.bufferFailureBody(bytes)
            return true
        case .redirect:
            return true
        }
    }

    func transfer(_ transfer: CurlTransfer, didSend totalBytesSent: Int64, of expected: Int64) {
        load.reportUpload(totalBytesSent: totalBytesSent, expected: expected, to: self)
    }

    func transfer(_ transfer: CurlTransfer, didFinishWith result: CURLcode) {
        guard let ended = load.end(transfer, for: self) else { return }
        let known = facts(of: transfer, result: result, ended: ended)
        carryOut(HTTPTransferOutcome.decide(known), detail: known.errorDetail)
    }

    /// What the handler knows as `transfer` ends with `result`: the input of
    /// ``HTTPTransferOutcome/decide(_:)``. A proxy's 407 to the tunnel begins its challenge here.
    private func facts(of transfer: CurlTransfer, result: CURLcode, ended: CurlLoad.AttemptEnd) -> HTTPTransferOutcome.Facts {
        let delivered = ended.responseDelivered
        let challengedByResponse = authentication.isChallenging
        let challengedByTunnel = !(challengedByResponse && result == CURLE_OK) && !delivered
            && beginTunnelChallenge(transfer, result: result)
        // What only a failure's error needs is read only for a failure.
        let failed = result != CURLE_OK
        var facts = HTTPTransferOutcome.Facts(result: result, url: request.url, errorDetail: failed ? transfer.errorDetail : nil,
                                              requestBytesSent: failed ? transfer.info(long: CURLINFO_REQUEST_SIZE) ?? 0 : 0,
                                              responseDelivered: delivered, challengedByResponse: challengedByResponse,
                                              challengedByTunnel: challengedByTunnel,
                                              waitsForConnectivity: environment.waitsForConnectivity)
        let watch: TLSClientCertificateRequest? = lock.withLock {
            facts.redirect = pendingRedirect
            facts.serverTrustAccepted = acceptedServer != nil
            facts.certificatePresented = clientCertificate != nil
            facts.certificateDeclined = declinedClientCertificate
            defer { certificateRequest = nil }
            return certificateRequest
        }
        // Only a failed handshake can have been ended by the watch; a revalidation matters only when
        // nothing was delivered.
        facts.certificateRequested = failed && watch?.wasRequested == true
        facts.revalidationAnswered = result == CURLE_OK && !delivered && cacheExchange.hasRefreshed
        return facts
    }

    /// Does what `outcome` says, from `deciding`. `detail`: libcurl's message, for a trust challenge.
    private func carryOut(_ outcome: HTTPTransferOutcome, detail: String?) {
        switch outcome {
        case .redirect(let request, let response):
            guard load.wait(.redirected, from: .deciding) else { return }
            client?.urlProtocol(self, wasRedirectedTo: request, redirectResponse: response)
        case .waitForConnectivity:
            guard load.wait(.waitingForConnectivity, from: .deciding) else { return }
            waitForConnectivity()
        case .resendBody:
            retryAfterChallenge(from: .deciding)
        case .authenticationChallenge:
            guard load.wait(.challenging, from: .deciding) else { return }
            presentChallenge()
        case .clientCertificateChallenge:
            guard load.wait(.challenging, from: .deciding) else { return }
            presentClientCertificateChallenge()
        case .serverTrustChallenge(let error):
            guard load.wait(.challenging, from: .deciding) else { return }
            presentTrustChallenge(error: error, detail: detail)
        case .finish:
            load.finish(for: self, from: .deciding)
        case .deliverRevalidatedResponse:
            guard load.conclude(from: .deciding) else { return }
            _ = finishRevalidationIfAnswered()
        case .fail(let error):
            load.fail(error, for: self, from: .deciding)
        }
    }

    /// The delegate refused the redirect: its response and body become the result.
    override func deliverRefusedRedirect() {
        guard load.conclude(from: .redirected) else { return }
        let outcome: (HTTPURLResponse, Data)? = lock.withLock {
            defer { pendingRedirect = nil; redirectBody = Data() }
            return pendingRedirect.map { ($0.response, redirectBody) }
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
        builtInClient?.taskIsWaitingForConnectivity()
        let attempt: Int = lock.withLock {
            connectivityAttempts += 1
            return connectivityAttempts
        }
        let delay = min(0.25 * pow(2, Double(min(attempt - 1, 10))), 5)
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in
            self?.startAttempt(expecting: .waitingForConnectivity)
        }
    }

    /// Starts the next attempt after a challenge (or after libcurl could not send a streamed body
    /// again). A streamed body was used by the attempt before, so the delegate is asked for a new
    /// stream first (as Apple's `needNewBodyStream` documents).
    func retryAfterChallenge(from expected: CurlLoad.Stage = .challenging) {
        load.retry(from: expected, for: self) { [weak self] stream in
            self?.startAttempt(expecting: .renewingBody, bodyStream: stream)
        }
    }
}
