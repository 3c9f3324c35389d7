import Foundation

// NTLM's exchange on one connection (``WebSocketURLProtocol``'s documentation): NTLM
// authenticates the connection, not the request, so after the delegate chose a credential for an
// NTLM protection space the next connection carries three messages. The stages are
// `negotiatingNTLM` (the NEGOTIATE is written; reading the 401 with the CHALLENGE),
// `skippingNTLMChallengeBody` (reading past that 401's body), then `handshaking` as for any
// handshake (the AUTHENTICATE is written; its answer is the handshake's).
extension WebSocketURLProtocol {
    /// The credential the next connection authenticates with NTLM: the one chosen for an NTLM
    /// protection space, unless the app's request sends its own `Authorization`.
    func ntlmCredential() -> URLCredential? {
        guard request.value(forHTTPHeaderField: "Authorization") == nil,
              let (credential, method) = authentication.serverCredential, method == NSURLAuthenticationMethodNTLM else { return nil }
        return credential
    }

    /// Takes the bytes of `transport` while the stage is one of NTLM's; `false` when it is not (the
    /// caller reads them as any handshake's answer).
    func receiveNTLMAnswer(_ bytes: UnsafeRawBufferPointer, on transport: WebSocketTransport, httpURL: URL) -> Bool {
        enum Next { case notNTLM, done, malformed(String), head(HTTPURLResponse, Data, key: String), challenge(HTTPURLResponse, [UInt8], Data, URLCredential) }
        let next: Next = lock.withLock {
            switch stage {
            case .negotiatingNTLM(let current, var reader, let key, let credential):
                guard current === transport else { return .done }
                switch reader.append(bytes, url: httpURL) {
                case .needMore:
                    stage = .negotiatingNTLM(current, reader, key: key, credential: credential)
                    return .done
                case .malformed(let problem):
                    stage = .stopped
                    return .malformed(problem)
                case .head(let response, let rest):
                    stage = .opened(current)
                    guard response.statusCode == 401, let token = WebSocketNTLMAuthorization.challengeToken(in: response) else {
                        return .head(response, rest, key: key)
                    }
                    return .challenge(response, token, rest, credential)
                }
            case .skippingNTLMChallengeBody(let current, _, _, _):
                return current === transport ? .notNTLM : .done
            default:
                return .notNTLM
            }
        }
        switch next {
        case .notNTLM:
            return skipNTLMChallengeBody(bytes, on: transport)
        case .done:
            return true
        case .malformed(let problem):
            transport.abort()
            fail(URLError(.badServerResponse, url: request.url, description: "The WebSocket handshake failed: \(problem)."))
        case .head(let response, let rest, let key):
            answered(response, rest: rest, key: key, transport: transport, httpURL: httpURL)
        case .challenge(let response, let token, let rest, let credential):
            answerNTLMChallenge(response, token: token, rest: rest, credential: credential, transport: transport, httpURL: httpURL)
        }
        return true
    }

    /// The server's 401 carries NTLM's CHALLENGE: makes the AUTHENTICATE and the request that
    /// carries it, and reads past the 401's body before writing it on the same connection.
    private func answerNTLMChallenge(_ response: HTTPURLResponse, token: [UInt8], rest: Data, credential: URLCredential,
                                     transport: WebSocketTransport, httpURL: URL) {
        HTTPCookieHandling.store(from: response, for: request, environment: environment)
        let key = WebSocketHandshakeKey.make()
        let head: Data
        let framing: HTTPResponseBodySkipper.Framing
        do throws(URLError) {
            let authorization: String
            do {
                authorization = try WebSocketNTLMAuthorization.answer(to: token, credential: credential)
            } catch {
                throw URLError(error == .malformedChallenge ? .badServerResponse : .userAuthenticationRequired, url: request.url,
                               description: "The WebSocket handshake's NTLM authentication failed: \(error.explanation).")
            }
            guard let found = HTTPResponseBodySkipper.framing(of: response) else {
                throw URLError(.userAuthenticationRequired, url: request.url,
                               description: "The WebSocket handshake's NTLM authentication cannot continue: the server closes the "
                                   + "connection after its NTLM challenge (Connection: close, or a body that ends with the "
                                   + "connection), and NTLM authenticates one connection.")
            }
            framing = found
            head = try WebSocketHandshakeExchange.requestHead(for: request, httpURL: httpURL, key: key, authorization: authorization,
                                                              environment: environment)
        } catch {
            stopAfterAnswer(transport)
            client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
            fail(error)
            return
        }
        let skipping: Bool = lock.withLock {
            guard case .opened(let current) = stage, current === transport else { return false }
            stage = .skippingNTLMChallengeBody(transport, HTTPResponseBodySkipper(framing, limit: HTTPAuthentication.failureBodyLimit),
                                               head: head, key: key)
            return true
        }
        guard skipping else {
            transport.abort()
            return
        }
        _ = rest.withUnsafeBytes { skipNTLMChallengeBody($0, on: transport) }
    }

    /// Reads `bytes` as the CHALLENGE 401's body; once it ended, writes the request with the
    /// AUTHENTICATE. `false` when the stage is not skipping that body.
    private func skipNTLMChallengeBody(_ bytes: UnsafeRawBufferPointer, on transport: WebSocketTransport) -> Bool {
        enum Next { case notSkipping, wait, malformed(String), send(Data) }
        let next: Next = lock.withLock {
            guard case .skippingNTLMChallengeBody(let current, var skipper, let head, let key) = stage else { return .notSkipping }
            guard current === transport else { return .wait }
            switch skipper.append(bytes) {
            case .needMore:
                stage = .skippingNTLMChallengeBody(current, skipper, head: head, key: key)
                return .wait
            case .malformed(let problem):
                stage = .stopped
                return .malformed("the body of the 401 with the NTLM challenge could not be read: \(problem)")
            case .done(let rest):
                guard rest.isEmpty else {
                    stage = .stopped
                    return .malformed("the server sent bytes after the NTLM challenge before the request that answers it")
                }
                stage = .handshaking(current, WebSocketHandshakeExchange.ResponseReader(), key: key)
                return .send(head)
            }
        }
        switch next {
        case .notSkipping:
            return false
        case .wait:
            break
        case .malformed(let problem):
            transport.abort()
            fail(URLError(.badServerResponse, url: request.url, description: "The WebSocket handshake failed: \(problem)."))
        case .send(let head):
            transport.write(head)
        }
        return true
    }
}
