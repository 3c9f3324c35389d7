import Foundation

/// The server-trust challenge of a stream task whose TLS server failed verification, as https
/// raises it (`NSURLAuthenticationMethodServerTrust`, the chain in a ``SecTrust``): the task's
/// delegate (or the session's) decides. Only `.useCredential` with `URLCredential(trust:)` for this
/// server's key accepts it — for the rest of the session, like https (``TLSAcceptedServers``);
/// every other answer fails the stream with the verification error (`.cancelAuthenticationChallenge`
/// with `cancelled`).
enum StreamTrustChallenge {
    /// Presents the challenge through `connection`'s task; its answer reaches the connection's
    /// state machine (`tlsEstablished` or `failed`).
    static func present(for connection: StreamConnection, chain: [Data], leafKey: Data?, reason: String, error: URLError) {
        guard let task = connection.task else {
            connection.handle { $0.failed(error) }
            return
        }
        let trust = SecTrust(certificates: chain, host: connection.host, failureReason: reason)
        let space = URLProtectionSpace(host: connection.host, port: connection.port, protocol: "tcp", serverTrust: trust)
        let answered = HandlerChallengeSender { [weak connection] answer in
            guard let connection else { return }
            switch outcome(of: answer, leafKey: leafKey, connection: connection, error: error) {
            case .accept: connection.handle { $0.tlsEstablished() }
            case .fail(let failure): connection.handle { $0.failed(failure) }
            }
        }
        task.handleChallenge(URLAuthenticationChallenge(protectionSpace: space, proposedCredential: nil, previousFailureCount: 0,
                                                        failureResponse: nil, error: error, sender: answered),
                             generation: nil)
    }

    /// What an answer means.
    private enum Outcome {
        case accept
        case fail(URLError)
    }

    private static func outcome(of answer: HandlerChallengeSender.Answer, leafKey: Data?, connection: StreamConnection,
                                error: URLError) -> Outcome {
        switch answer {
        case .use(let credential):
            // Only a trust credential for this very key accepts the server.
            guard let accepted = credential.trust, let candidate = TLSServerTrust(accepting: accepted),
                  let leafKey, candidate.publicKey == leafKey else { return .fail(error) }
            if let url = connection.url { _ = TLSAcceptedServers.shared(in: connection.environment)?.accept(candidate, for: url) }
            return .accept
        case .cancel:
            return .fail(URLError(.cancelled, url: connection.url, description: "The server-trust challenge was cancelled."))
        case .withoutCredential, .defaultHandling, .rejectProtectionSpace:
            return .fail(error)
        }
    }
}
