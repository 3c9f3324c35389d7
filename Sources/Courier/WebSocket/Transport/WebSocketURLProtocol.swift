import Foundation

/// The handler of `ws:` and `wss:` URLs for `URLSessionWebSocketTask`: the opening handshake
/// (RFC 6455 §4) on a connection libcurl opens (``WebSocketConnector``), then the connection is
/// the task's (``WebSocketTransportOwner``).
///
/// What it reports to the task's client, as an HTTP load does: the response (the 101, or any other
/// answer, which then fails the task with `badServerResponse` while `response` keeps it); a redirect
/// (a 3xx with `Location`, proposed with the ws/wss form of its URL: the task asks
/// `willPerformHTTPRedirection` and starts a new handler); the server-trust challenge of a wss
/// server whose certificate fails verification (accepted servers are pinned, for the session, as
/// for https); failures. Cookies the answer sets are stored.
///
/// Authentication is a data task's (``HTTPAuthentication``): a 401 with a Basic, Digest, NTLM or Negotiate offer, or
/// a proxy's 407 to the CONNECT that opens the tunnel, becomes a challenge for the task's delegate
/// (`urlSession(_:task:didReceive:completionHandler:)`), one per protection space; default handling
/// uses the credential storage's default credential once, and a credential given with a
/// persistence is stored once the server (or proxy) accepted it. Each answer with a credential is
/// sent on a new connection: the server's in an `Authorization` Courier writes (Basic, Digest
/// with ``WebSocketDigestAuthorization``, or Negotiate with ``WebSocketNegotiateAuthorization``
/// from the ambient Kerberos ticket cache, as libcurl does for a data task), the proxy's through
/// libcurl. A refused or cancelled challenge, or a Negotiate token GSS-API cannot make, ends the
/// task as any other answer than 101 does (`response` keeps the 401 or 407).
///
/// NTLM authenticates a connection, so its exchange stays on one: the request with
/// `Authorization: NTLM <NEGOTIATE>` (``WebSocketNTLMAuthorization``), the server's 401 with its
/// CHALLENGE, whose body is read past (``HTTPResponseBodySkipper``), then the request again (a fresh
/// `Sec-WebSocket-Key`) with `Authorization: NTLM <AUTHENTICATE>` on the same connection, whose
/// answer is the handshake's. A CHALLENGE on a connection the server closes (`Connection: close`,
/// or a body that ends with the connection) cannot be answered: the task fails with
/// `userAuthenticationRequired` and `response` keeps that 401. A 401 to the AUTHENTICATE is a
/// refused credential: the challenge is presented again with `previousFailureCount` one higher.
///
/// Started, stopped and answered from any thread: its state is under `lock`
/// (``HandlerCapabilities/concurrentStartStop``).
final class WebSocketURLProtocol: BuiltInURLProtocol, WebSocketTransportDelegate, @unchecked Sendable {
    enum Stage {
        case idle
        /// Connecting (`curl_easy_perform` on a global queue).
        case connecting(WebSocketConnector.Connection)
        /// Waiting for the delegate's answer to a server-trust or authentication challenge.
        case challenging
        /// The request is written; reading the answer's head.
        case handshaking(WebSocketTransport, WebSocketHandshakeExchange.ResponseReader, key: String)
        /// NTLM's first request (`Authorization: NTLM <NEGOTIATE>`, with `key`) is written; reading
        /// the answer's head, a 401 with the server's CHALLENGE that `credential` answers.
        case negotiatingNTLM(WebSocketTransport, WebSocketHandshakeExchange.ResponseReader, key: String, credential: URLCredential)
        /// Reading past the body of the 401 with NTLM's CHALLENGE; then `head` (the request with
        /// `Authorization: NTLM <AUTHENTICATE>`, with `key`) is written on the same connection.
        case skippingNTLMChallengeBody(WebSocketTransport, HTTPResponseBodySkipper, head: Data, key: String)
        /// The task has the connection; the handler keeps it to close it when stopped.
        case opened(WebSocketTransport)
        case stopped
    }

    /// Guards `stage` and the retry state; a leaf.
    let lock = Lock()
    var stage = Stage.idle
    private var acceptedServer: TLSServerTrust?
    /// The `Authorization` the next attempt sends, made from the credential the delegate (or the
    /// default handling) chose for a 401.
    var serverAuthorization: String?
    /// The `WWW-Authenticate` value of the 401 being answered (its Digest parameters).
    var serverChallenge: String?
    /// The 401 being answered: the task's response if no `Authorization` can be made for it.
    var serverChallengeResponse: HTTPURLResponse?
    /// The 401 and 407 challenges and the credentials chosen for them.
    let authentication = HTTPAuthentication()

    /// The load's configuration, which the client was made with.
    let configuration: HandlerConfiguration
    var environment: HandlerEnvironment { configuration.environment }

    override class func canInit(with request: URLRequest) -> Bool {
        guard let scheme = request.url?.scheme?.lowercased() else { return false }
        return scheme == "ws" || scheme == "wss"
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    required init(request: URLRequest, cachedResponse: CachedURLResponse?, client: (any URLProtocolClient)?) {
        configuration = (client as? BuiltInHandlerClient)?.configuration ?? .standalone()
        super.init(request: request, cachedResponse: cachedResponse, client: client)
    }

    override func startLoading() {
        guard task is WebSocketTransportOwner else {
            fail(URLError(.unsupportedURL, url: request.url,
                          description: "ws and wss URLs are loaded by WebSocket tasks (URLSession.webSocketTask(with:))."))
            return
        }
        guard let url = request.url, let httpURL = WebSocketHandshakeRequest.httpURL(for: url), !(httpURL.host ?? "").isEmpty else {
            fail(URLError(.badURL, url: request.url, description: "The WebSocket URL must be a ws or wss URL with a host."))
            return
        }
        if let remembered = TLSAcceptedServers.shared(in: environment)?.server(for: httpURL) {
            lock.withLock { if acceptedServer == nil { acceptedServer = remembered } }
        }
        connect(to: httpURL)
    }

    override func stopLoading() {
        let previous: Stage = lock.withLock {
            defer { stage = .stopped }
            return stage
        }
        switch previous {
        case .connecting(let connection): connection.abort()
        case .handshaking(let transport, _, _), .negotiatingNTLM(let transport, _, _, _),
             .skippingNTLMChallengeBody(let transport, _, _, _):
            transport.abort()
        case .opened(let transport): transport.close()
        case .idle, .challenging, .stopped: break
        }
    }

    // MARK: Connecting

    func connect(to httpURL: URL) {
        guard let connection = WebSocketConnector.Connection() else {
            fail(URLError(.cannotConnectToHost, url: request.url, description: "libcurl could not make a handle."))
            return
        }
        let accepted: TLSServerTrust?? = lock.withLock {
            switch stage {
            case .idle, .challenging:
                stage = .connecting(connection)
                return .some(acceptedServer)
            default:
                return .none
            }
        }
        guard case .some(let pinned) = accepted else { return }
        let environment = self.environment
        let timeout = configuration.requestTimeout
        let proxyCredential = authentication.proxyCredential
        DispatchQueue.global().async { [self] in
            let result = WebSocketConnector.connect(connection, to: httpURL, environment: environment,
                                                    timeout: timeout, acceptedServer: pinned, proxyCredential: proxyCredential)
            switch result {
            case .success(let connected):
                handshake(over: connected, httpURL: httpURL)
            case .failure(.untrustedServer(let error, let detail)):
                guard transition(from: connection, to: .challenging) else { return }
                presentTrustChallenge(for: httpURL, error: error, detail: detail)
            case .failure(.proxyRefused(let response, let proxy, let error)):
                guard authentication.beginChallenge(for: response, request: handshakeRequest(for: httpURL),
                                                    environment: environment, proxy: proxy) else {
                    if transition(from: connection, to: .stopped) { fail(error) }
                    return
                }
                guard transition(from: connection, to: .challenging) else { return }
                presentAuthenticationChallenge(httpURL: httpURL)
            case .failure(.failed(let error)):
                guard transition(from: connection, to: .stopped) else { return }
                fail(error)
            }
        }
    }

    /// Moves from connecting with `connection` to `next`; `false` when the load moved on (stopped).
    func transition(from connection: WebSocketConnector.Connection, to next: Stage) -> Bool {
        lock.withLock {
            guard case .connecting(let current) = stage, current === connection else { return false }
            stage = next
            return true
        }
    }

    private func handshake(over connected: WebSocketConnector.Connected, httpURL: URL) {
        guard let loop = CurlMultiLoop.shared(in: environment) else {
            if transition(from: connected.connection, to: .stopped) {
                fail(URLError(.cannotConnectToHost, url: request.url, description: "The session is invalidated."))
            }
            return
        }
        let key = WebSocketHandshakeKey.make()
        let head: Data
        do {
            head = try WebSocketHandshakeExchange.requestHead(for: request, httpURL: httpURL, key: key,
                                                              authorization: lock.withLock { serverAuthorization },
                                                              environment: environment)
        } catch {
            if transition(from: connected.connection, to: .stopped) { fail(error) }
            return
        }
        let transport = WebSocketTransport(connection: connected.connection, socket: connected.socket,
                                           plain: connected.isPlain, loop: loop,
                                           url: request.url, delegate: self)
        let reader = WebSocketHandshakeExchange.ResponseReader()
        let next: Stage = ntlmCredential().map { .negotiatingNTLM(transport, reader, key: key, credential: $0) }
            ?? .handshaking(transport, reader, key: key)
        guard transition(from: connected.connection, to: next) else {
            transport.abort()
            return
        }
        transport.write(head)
    }

    // MARK: WebSocketTransportDelegate (the handshake's answer)

    func transport(_ transport: WebSocketTransport, didReceive bytes: UnsafeRawBufferPointer) {
        guard let httpURL = request.url.flatMap(WebSocketHandshakeRequest.httpURL(for:)),
              !receiveNTLMAnswer(bytes, on: transport, httpURL: httpURL) else { return }
        enum Next { case wait, ignore, malformed(String), head(HTTPURLResponse, Data, key: String) }
        let next: Next = lock.withLock {
            guard case .handshaking(let current, var reader, let key) = stage, current === transport else { return .ignore }
            switch reader.append(bytes, url: httpURL) {
            case .needMore:
                stage = .handshaking(current, reader, key: key)
                return .wait
            case .malformed(let problem):
                stage = .stopped
                return .malformed(problem)
            case .head(let response, let rest):
                stage = .opened(current)
                return .head(response, rest, key: key)
            }
        }
        switch next {
        case .wait, .ignore:
            return
        case .malformed(let problem):
            transport.abort()
            fail(URLError(.badServerResponse, url: request.url, description: "The WebSocket handshake failed: \(problem)."))
        case .head(let response, let rest, let key):
            answered(response, rest: rest, key: key, transport: transport, httpURL: httpURL)
        }
    }

    func transport(_ transport: WebSocketTransport, didCloseWith error: URLError?) {
        let current: Bool = lock.withLock {
            switch stage {
            case .handshaking(let handshaking, _, _), .negotiatingNTLM(let handshaking, _, _, _),
                 .skippingNTLMChallengeBody(let handshaking, _, _, _):
                guard handshaking === transport else { return false }
            default:
                return false
            }
            stage = .stopped
            return true
        }
        guard current else { return }
        fail(URLError(.networkConnectionLost, url: request.url,
                      description: "The WebSocket server closed the connection before it answered the handshake.",
                      underlying: error))
    }

    /// The server answered the handshake with `response`.
    func answered(_ response: HTTPURLResponse, rest: Data, key: String, transport: WebSocketTransport, httpURL: URL) {
        HTTPCookieHandling.store(from: response, for: request, environment: environment)
        if let redirect = redirectRequest(after: response) {
            stopAfterAnswer(transport)
            client?.urlProtocol(self, wasRedirectedTo: redirect, redirectResponse: response)
            return
        }
        if authentication.beginChallenge(for: response, request: handshakeRequest(for: httpURL), environment: environment,
                                         methods: WebSocketHandshakeExchange.serverAuthenticationMethods) {
            let challenging: Bool = lock.withLock {
                guard case .opened(let current) = stage, current === transport else { return false }
                stage = .challenging
                serverChallenge = response.value(forHTTPHeaderField: "WWW-Authenticate")
                serverChallengeResponse = response
                return true
            }
            transport.abort()
            if challenging { presentAuthenticationChallenge(httpURL: httpURL) }
            return
        }
        let offered = WebSocketHandshakeRequest.offeredProtocols(inHeaderValue: request.value(forHTTPHeaderField: "Sec-WebSocket-Protocol"))
        do {
            let selected = try WebSocketHandshakeValidator.validate(response, key: key, offeredProtocols: offered)
            client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
            guard let owner = task as? WebSocketTransportOwner else {
                stopAfterAnswer(transport)
                return
            }
            owner.webSocketHandler(self, didOpen: transport, selectedProtocol: selected, initialBytes: rest)
        } catch {
            stopAfterAnswer(transport)
            client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
            fail(error)
        }
    }

    /// Closes the handshake's connection: its answer was not an upgrade.
    func stopAfterAnswer(_ transport: WebSocketTransport) {
        lock.withLock {
            if case .opened(let current) = stage, current === transport { stage = .stopped }
        }
        transport.abort()
    }

    /// The request a 3xx with `Location` proposes: the same request for the new URL, in its ws or
    /// wss form; the origin-bound fields go when the origin changes. `nil` for any other answer.
    private func redirectRequest(after response: HTTPURLResponse) -> URLRequest? {
        guard [301, 302, 303, 307, 308].contains(response.statusCode),
              let location = response.value(forHTTPHeaderField: "Location"),
              let target = URL(string: location, relativeTo: response.url)?.absoluteURL,
              let mapped = Self.webSocketURL(for: target) else { return nil }
        var next = request
        next.url = mapped
        if !URLOrigin.same(mapped, request.url) {
            for field in URLOrigin.originBoundFields { next.setValue(nil, forHTTPHeaderField: field) }
        }
        return next
    }

    /// `url` with http as ws and https as wss (ws and wss stay); another scheme stays as it is, so
    /// the task refuses it.
    static func webSocketURL(for url: URL) -> URL? {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return nil }
        switch components.scheme?.lowercased() {
        case "http": components.scheme = "ws"
        case "https": components.scheme = "wss"
        default: break
        }
        return components.url
    }

    // MARK: Server trust

    private func presentTrustChallenge(for httpURL: URL, error: URLError, detail: String?) {
        let proxy = environment.proxyDictionary.flatMap { HTTPProxyConfiguration.proxy(for: httpURL, in: $0)?.curlValue }
        TLSServerTrustChallenge.present(for: httpURL, error: error, detail: detail, environment: environment,
                                        timeout: configuration.requestTimeout, proxy: proxy,
                                        proxyCredential: authentication.proxyCredential,
                                        deliver: { [weak self] challenge in
                                            guard let self else { return }
                                            client?.urlProtocol(self, didReceive: challenge)
                                        },
                                        decided: { [weak self] outcome in
                                            self?.trustDecided(outcome, httpURL: httpURL)
                                        })
    }

    private func trustDecided(_ outcome: TLSServerTrustChallenge.Outcome, httpURL: URL) {
        let stillChallenging: Bool = lock.withLock {
            guard case .challenging = stage else { return false }
            if case .accept(let trust) = outcome { acceptedServer = trust }
            return true
        }
        guard stillChallenging else { return }
        switch outcome {
        case .accept:
            connect(to: httpURL)
        case .fail(let error):
            lock.withLock { stage = .stopped }
            fail(error)
        }
    }

    func fail(_ error: URLError) {
        client?.urlProtocol(self, didFailWithError: error)
    }
}

extension WebSocketURLProtocol {
    /// The task's connection ended (a close handshake: `error` is `nil`): reports the end of the
    /// load to the client, which completes the task.
    func connectionEnded(error: URLError?) {
        if let error {
            client?.urlProtocol(self, didFailWithError: error)
        } else {
            client?.urlProtocolDidFinishLoading(self)
        }
    }
}
