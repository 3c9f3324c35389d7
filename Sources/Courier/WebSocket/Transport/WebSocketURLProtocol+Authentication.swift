import Foundation

// The handshake's authentication challenges: a server's 401 (Basic, Digest, NTLM) and a proxy's 407 to
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
            let challenge = lock.withLock { serverChallenge }
            let authorization = authentication.serverCredential.flatMap {
                WebSocketHandshakeExchange.authorization(for: $0.credential, method: $0.method, challenge: challenge, httpURL: httpURL)
            }
            lock.withLock { serverAuthorization = authorization }
            connect(to: httpURL)
        case .nextSpace:
            presentAuthenticationChallenge(httpURL: httpURL)
        case .giveUp:
            endWithFailureResponse()
        case .cancel:
            guard stopChallenging() else { return }
            fail(URLError(.cancelled, url: request.url, description: "The authentication challenge was cancelled."))
        }
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

    /// Moves from challenging to stopped; `false` when the load moved on (it was stopped).
    private func stopChallenging() -> Bool {
        lock.withLock {
            guard case .challenging = stage else { return false }
            stage = .stopped
            return true
        }
    }
}
