import Foundation

/// A proxy credential as libcurl takes it.
struct ProxyCredential: Sendable {
    var user: String
    var password: String
    /// The `CURLAUTH_*` scheme mask.
    var mask: Int
}

/// The server-trust challenge a libcurl handler (https, ftps) raises when a server's certificate
/// fails verification, and what the delegate's answer means.
///
/// The challenge's protection space carries the server's chain, fetched by a handshake-only probe
/// (``TLSCertificateChainProbe``) off the loop thread. Accepting it yields a ``TLSServerTrust`` that
/// later attempts pin, remembered for the session in ``TLSAcceptedServers``.
enum TLSServerTrustChallenge {
    /// What the handler does after the delegate answered.
    enum Outcome: Sendable {
        /// Retry, accepting this server.
        case accept(TLSServerTrust)
        /// End the load with this error.
        case fail(URLError)
    }

    /// Builds the challenge for `url` (on a background queue) and hands it to `deliver`; the
    /// delegate's answer reaches `decided` once.
    /// - Parameters:
    ///   - error: the verification failure, the load's error unless the delegate accepts.
    ///   - detail: libcurl's message, shown as the trust's failure reason.
    ///   - timeout: the load's idle timeout (``HandlerConfiguration/requestTimeout``), bounding the
    ///     probe that fetches the certificate chain.
    ///   - explicitFTPTLS: the server is reached by `ftp://` with `AUTH TLS` (the probe must ask for TLS).
    ///   - proxy: the `CURLOPT_PROXY` value of the load (`nil`: libcurl's default) and the credential
    ///     it answers the proxy with, for the probe.
    static func present(for url: URL, error: URLError, detail: String?, environment: HandlerEnvironment, timeout: TimeInterval,
                        explicitFTPTLS: Bool = false, proxy: String? = nil, proxyCredential: ProxyCredential? = nil,
                        deliver: @escaping @Sendable (URLAuthenticationChallenge) -> Void,
                        decided: @escaping @Sendable (Outcome) -> Void) {
        guard let host = url.host else {
            decided(.fail(error))
            return
        }
        let port = url.port ?? defaultPort(for: url)
        DispatchQueue.global().async {
            let chain = TLSCertificateChainProbe.chain(for: url, timeout: timeout, explicitFTPTLS: explicitFTPTLS, proxy: proxy,
                                                       proxyCredential: proxyCredential)
            let trust = SecTrust(certificates: chain, host: host, failureReason: detail)
            let space = URLProtectionSpace(host: host, port: port, protocol: url.scheme?.lowercased(), serverTrust: trust)
            let sender = HandlerChallengeSender { answer in
                decided(outcome(of: answer, url: url, error: error, environment: environment))
            }
            deliver(URLAuthenticationChallenge(protectionSpace: space, proposedCredential: nil, previousFailureCount: 0,
                                               failureResponse: nil, error: error, sender: sender))
        }
    }

    private static func outcome(of answer: HandlerChallengeSender.Answer, url: URL, error: URLError,
                                environment: HandlerEnvironment) -> Outcome {
        switch answer {
        case .use(let credential):
            // Only a credential made with `URLCredential(trust:)` accepts the server; a password or
            // client-certificate credential says nothing about it, so the certificate stays untrusted.
            guard let accepted = credential.trust, let candidate = TLSServerTrust(accepting: accepted) else {
                return .fail(error)
            }
            return .accept(TLSAcceptedServers.shared(in: environment)?.accept(candidate, for: url) ?? candidate)
        case .cancel:
            return .fail(URLError(.cancelled, url: url, description: "The server-trust challenge was cancelled."))
        case .withoutCredential, .defaultHandling, .rejectProtectionSpace:
            return .fail(error)
        }
    }

    /// The port a URL without one uses.
    static func defaultPort(for url: URL) -> Int {
        switch url.scheme?.lowercased() {
        case "ftps": 990
        case "ftp": 21
        case "http": 80
        default: 443
        }
    }
}
