internal import CCurl
import Foundation

// The HTTP handler's challenges: authentication (401, 407, a proxy refusing the tunnel), client
// certificates and server trust. Each is presented while the load is `challenging`; the delegate's
// answer retries with a new attempt (``HTTPURLProtocol/retryAfterChallenge(from:)``) or ends the
// load. An answer that comes after the load was stopped finds it no longer `challenging` and does
// nothing.
extension HTTPURLProtocol {
    // MARK: Authentication

    /// A proxy refused to open a tunnel with 407: starts the challenge such a response raises.
    /// libcurl keeps the proxy's answer to CONNECT to itself (`CURLOPT_SUPPRESS_CONNECT_HEADERS`), so
    /// the schemes come from `CURLINFO_PROXYAUTH_AVAIL` and the realm is not known.
    func beginTunnelChallenge(_ transfer: CurlTransfer, result: CURLcode) -> Bool {
        guard result != CURLE_OK, let url = request.url,
              let response = HTTPAuthentication.tunnelRefusal(of: transfer, url: url) else { return false }
        return authentication.beginChallenge(for: response, request: request, environment: environment,
                                             proxy: Self.proxyEndpoint(of: transfer, for: url, environment: environment))
    }

    /// Presents the authentication exchange's challenge for its current protection space, or
    /// delivers the 401/407 as the result when no space is left.
    func presentChallenge() {
        guard let challenge = authentication.makeChallenge(sender: HandlerChallengeSender { [weak self] answer in
            self?.answer(answer)
        }) else {
            finishWithFailureResponse()
            return
        }
        client?.urlProtocol(self, didReceive: challenge)
    }

    private func answer(_ answer: HandlerChallengeSender.Answer) {
        guard load.stage == .challenging else { return }
        switch authentication.resolve(answer, environment: environment) {
        case .retry:
            retryAfterChallenge()
        case .nextSpace:
            presentChallenge()
        case .giveUp:
            finishWithFailureResponse()
        case .cancel:
            load.fail(URLError(.cancelled, url: request.url, description: "The authentication challenge was cancelled."),
                      for: self, from: .challenging)
        }
    }

    /// Delivers the 401/407 response and its body as the task's result.
    private func finishWithFailureResponse() {
        guard let (response, body) = authentication.takeFailure(), load.conclude(from: .challenging) else { return }
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        if !body.isEmpty { client?.urlProtocol(self, didLoad: body) }
        client?.urlProtocolDidFinishLoading(self)
    }

    // MARK: Client certificates

    /// Asks the delegate for a client certificate the server asked for. A certificate is presented
    /// from the next attempt on; default handling, rejecting the space or no credential go on
    /// without one (the server decides), cancelling cancels the load.
    func presentClientCertificateChallenge() {
        guard let url = request.url, let host = url.host else { return }
        let error = URLError(.clientCertificateRequired, url: url, description: "The server requires a client certificate.")
        let space = URLProtectionSpace(host: host, port: url.port ?? 443, protocol: url.scheme?.lowercased(), realm: nil,
                                       authenticationMethod: NSURLAuthenticationMethodClientCertificate)
        let sender = HandlerChallengeSender { [weak self] answer in
            guard let self, load.stage == .challenging else { return }
            switch answer {
            case .use(let credential):
                lock.withLock {
                    if let files = credential.clientCertificate {
                        clientCertificate = files
                    } else {
                        declinedClientCertificate = true
                    }
                }
                retryAfterChallenge()
            case .cancel:
                load.fail(URLError(.cancelled, url: url, description: "The client-certificate challenge was cancelled."),
                          for: self, from: .challenging)
            case .withoutCredential, .defaultHandling, .rejectProtectionSpace:
                lock.withLock { declinedClientCertificate = true }
                retryAfterChallenge()
            }
        }
        let challenge = URLAuthenticationChallenge(protectionSpace: space, proposedCredential: nil, previousFailureCount: 0,
                                                   failureResponse: nil, error: error, sender: sender)
        client?.urlProtocol(self, didReceive: challenge)
    }

    // MARK: Server trust

    /// Asks the delegate whether to trust a server whose certificate failed verification.
    func presentTrustChallenge(error: URLError, detail: String?) {
        guard let url = request.url else { return }
        TLSServerTrustChallenge.present(for: url, error: error, detail: detail, environment: environment,
                                        timeout: configuration.requestTimeout,
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
            guard load.stage == .challenging else { return }
            lock.withLock { acceptedServer = accepted }
            retryAfterChallenge()
        case .fail(let error):
            load.fail(error, for: self, from: .challenging)
        }
    }
}
