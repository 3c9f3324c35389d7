import Foundation

// The handshake's authentication challenges: a server's 401 (Basic, Digest, NTLM, Negotiate) and a proxy's 407 to
// the tunnel's CONNECT, presented to the task's delegate as for a data task (``HTTPAuthentication``
// keeps the protection spaces, failure counts and chosen credentials). While the delegate decides
// the stage is `challenging` and no connection is open; an answer with a credential connects again.
extension WebSocketURLProtocol {
    /// The request whose URL names the protection space: the handshake's, in its http(s) form.
    func handshakeRequest(for httpURL: URL) -> URLRequest {
        var copy = request
        copy.url = httpURL
        return copy
    }

    /// Presents the challenge for the current protection space, or ends the load with the 401 or
    /// 407 when no space is left.
    func presentAuthenticationChallenge(httpURL: URL) {
        guard let challenge = authentication.makeChallenge(sender: HandlerChallengeSender { [weak self] answer in
            self?.answerAuthentication(answer, httpURL: httpURL)
        }) else {
            endWithFailureResponse()
            return
        }
        client?.urlProtocol(self, didReceive: challenge)
    }

    private func answerAuthentication(_ answer: HandlerChallengeSender.Answer, httpURL: URL) {
        guard lock.withLock({ if case .challenging = stage { return true } else { return false } }) else { return }
        switch authentication.resolve(answer, environment: environment) {
        case .retry:
            // A Negotiate token may wait for the KDC: it is made off the delegate's queue.
            DispatchQueue.global().async { [self] in retry(httpURL: httpURL) }
        case .nextSpace:
            presentAuthenticationChallenge(httpURL: httpURL)
        case .giveUp:
            endWithFailureResponse()
        case .cancel:
            guard stopChallenging() else { return }
            fail(URLError(.cancelled, url: request.url, description: "The authentication challenge was cancelled."))
        }
    }

    /// Connects again with the `Authorization` made from the chosen credential; when it cannot be
    /// made (GSS-API has no Negotiate token), the 401 ends the load with that reason.
    private func retry(httpURL: URL) {
        let challenge = lock.withLock { serverChallenge }
        let authorization: String?
        do {
            authorization = try authentication.serverCredential.flatMap { chosen throws(URLError) in
                try WebSocketHandshakeExchange.authorization(for: chosen.credential, method: chosen.method, challenge: challenge,
                                                             httpURL: httpURL, url: request.url)
            }
        } catch {
            endWithoutToken(error)
            return
        }
        lock.withLock { serverAuthorization = authorization }
        connect(to: httpURL)
    }

    /// Ends the load with the 401 or 407 that was not answered: it becomes the task's response, and
    /// the task fails as for any answer other than 101.
    private func endWithFailureResponse() {
        guard let (response, _) = authentication.takeFailure(), stopChallenging() else { return }
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        fail(URLError(.badServerResponse, url: request.url,
                      description: "The WebSocket handshake failed: the \(response.statusCode == 407 ? "proxy" : "server") "
                          + "answered with status \(response.statusCode) and no credential was accepted."))
    }

    /// Ends the load with the 401 being answered when no `Authorization` could be made for the
    /// chosen credential (`reason`: GSS-API made no Negotiate token): the 401 becomes the task's
    /// response, and the error says why (`reason` is its underlying error).
    private func endWithoutToken(_ reason: URLError) {
        let response = lock.withLock { serverChallengeResponse }
        guard stopChallenging() else { return }
        if let response { client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed) }
        fail(URLError(.badServerResponse, url: request.url,
                      description: "The WebSocket handshake failed: the server answered with status \(response?.statusCode ?? 401) "
                          + "and no credential could be sent. \(reason.localizedDescription)",
                      underlying: reason))
    }

    /// Moves from challenging to stopped; `false` when the load moved on (it was stopped).
    private func stopChallenging() -> Bool {
        lock.withLock {
            guard case .challenging = stage else { return false }
            stage = .stopped
            return true
        }
    }
}
