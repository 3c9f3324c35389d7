internal import CCurl
import Foundation

/// One HTTP handler instance's authentication exchange: turns a 401 (server) or 407 (proxy) into
/// `URLAuthenticationChallenge`s, one per scheme the server offers (Basic, Digest, NTLM,
/// Negotiate), keeps the failure response and body until the delegate decides, and applies the
/// chosen credentials to the next attempt.
///
/// The server's and the proxy's credentials are kept apart and both sent, so answering a 401
/// keeps the credential that got past the proxy. For Digest, NTLM and Negotiate libcurl makes the
/// round trip the scheme needs within one transfer: a 401/407 it answers itself is followed by
/// another response, which ends the challenge that 401/407 began; only the transfer's last
/// response counts (and a refusal is counted once, when its challenge is shown).
///
/// A credential the delegate gave with a persistence goes into the session's credential storage
/// once the server (or proxy) accepted it: a response other than 401/407 (or, for the proxy, a 401
/// from the origin behind it).
///
/// Default handling uses the session's credential storage (the space's default credential) or the
/// URL's user info, once per protection space; after a failure only the delegate can supply more.
final class HTTPAuthentication: @unchecked Sendable {
    /// What the handler does after the delegate answered.
    enum Resolution { case retry, nextSpace, giveUp, cancel }

    /// The most body bytes of a 401/407 kept for delivery when the app continues without credential.
    static let failureBodyLimit = 1 << 20

    /// A credential sent to the server or to the proxy.
    private struct Attempt {
        var credential: URLCredential
        /// The protection space it answered.
        var space: URLProtectionSpace
        /// Whether it goes into the credential storage once accepted (the delegate gave it with a
        /// persistence, and it was not stored yet).
        var storeWhenAccepted: Bool
        var method: String { space.authenticationMethod }
    }

    private let lock = Lock()
    private var spaces: [URLProtectionSpace] = []
    private var spaceIndex = 0
    private var failureResponse: HTTPURLResponse?
    private var failureBody = Data()
    private var failures: [URLProtectionSpace: Int] = [:]
    private var serverAttempt: Attempt?
    private var proxyAttempt: Attempt?
    /// The space whose credential the pending 401/407 refused; counted when the challenge is made.
    private var refusedSpace: URLProtectionSpace?
    private var requestURL: URL?
    private var challenging = false

    /// Whether a challenge is being prepared or waits for the delegate.
    var isChallenging: Bool { lock.withLock { challenging } }

    /// Takes each response head of a transfer. Starts a challenge when `response` asks for
    /// authentication with a scheme Courier can answer, and returns `true`. Any other response ends
    /// a challenge an earlier head of the same transfer began (libcurl answered it itself) and
    /// stores the credentials it shows were accepted.
    /// `proxy`: for a 407, the proxy that sent it (its protection space names the proxy; the
    /// request's host and port stand in when it is not known). `methods`: the authentication
    /// methods the caller can answer (`nil`: every one Courier knows); other offers are ignored.
    func beginChallenge(for response: HTTPURLResponse, request: URLRequest, environment: HandlerEnvironment,
                        proxy: (host: String, port: Int)? = nil, methods: Set<String>? = nil) -> Bool {
        let isProxy = response.statusCode == 407
        guard response.statusCode == 401 || isProxy, let url = request.url, let host = url.host else {
            accepted(server: true, proxy: true, environment: environment)
            return false
        }
        let header = response.value(forHTTPHeaderField: isProxy ? "Proxy-Authenticate" : "WWW-Authenticate") ?? ""
        let scheme = url.scheme?.lowercased() ?? "http"
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        let offered: [URLProtectionSpace] = HTTPAuthenticationHeader.offers(in: header).compactMap { offer in
            guard let method = offer.authenticationMethod, methods?.contains(method) ?? true else { return nil }
            if isProxy {
                return URLProtectionSpace(proxyHost: proxy?.host ?? host, port: proxy?.port ?? port,
                                          type: scheme == "https" ? NSURLProtectionSpaceHTTPSProxy : NSURLProtectionSpaceHTTPProxy,
                                          realm: offer.realm, authenticationMethod: method)
            }
            return URLProtectionSpace(host: host, port: port, protocol: scheme, realm: offer.realm, authenticationMethod: method)
        }
        // A 401 came from behind the proxy: the proxy took its credential.
        if !isProxy { accepted(server: false, proxy: true, environment: environment) }
        guard !offered.isEmpty else {
            endPendingChallenge()
            return false
        }
        lock.withLock {
            spaces = offered
            spaceIndex = 0
            failureResponse = response
            failureBody = Data()
            requestURL = url
            challenging = true
            let sent = isProxy ? proxyAttempt : serverAttempt
            refusedSpace = sent.flatMap { sent in offered.first { $0.authenticationMethod == sent.method } }
        }
        return true
    }

    /// The response ended the transfer's exchange without a challenge Courier answers.
    private func endPendingChallenge() {
        lock.withLock {
            spaces = []
            spaceIndex = 0
            failureResponse = nil
            failureBody = Data()
            refusedSpace = nil
            challenging = false
        }
    }

    /// The server (`server`) or the proxy (`proxy`) accepted the credential sent to it: stores it
    /// when the delegate asked for that. With `server`, an earlier challenge of the transfer ends.
    private func accepted(server: Bool, proxy: Bool, environment: HandlerEnvironment) {
        if server { endPendingChallenge() }
        let toStore: [Attempt] = lock.withLock {
            var list: [Attempt] = []
            if server, let attempt = serverAttempt, attempt.storeWhenAccepted {
                list.append(attempt)
                serverAttempt?.storeWhenAccepted = false
            }
            if proxy, let attempt = proxyAttempt, attempt.storeWhenAccepted {
                list.append(attempt)
                proxyAttempt?.storeWhenAccepted = false
            }
            return list
        }
        for attempt in toStore { environment.credentialStorage?.set(attempt.credential, for: attempt.space) }
    }

    /// Keeps (up to a limit) the body of the 401/407.
    func bufferFailureBody(_ bytes: UnsafeRawBufferPointer) {
        lock.withLock {
            let room = Self.failureBodyLimit - failureBody.count
            if room > 0 { failureBody.append(contentsOf: bytes.prefix(room)) }
        }
    }

    /// The challenge for the current protection space, or `nil` when none is left. The first call
    /// for a 401/407 counts the refusal of the credential that was sent.
    func makeChallenge(sender: any URLAuthenticationChallengeSender) -> URLAuthenticationChallenge? {
        lock.withLock {
            if let refused = refusedSpace {
                failures[refused, default: 0] += 1
                refusedSpace = nil
            }
            guard spaceIndex < spaces.count else { return nil }
            let space = spaces[spaceIndex]
            let count = failures[space] ?? 0
            let proposed = (space.isProxy() ? proxyAttempt : serverAttempt)?.credential
            return URLAuthenticationChallenge(protectionSpace: space, proposedCredential: proposed,
                                              previousFailureCount: count, failureResponse: failureResponse,
                                              error: nil, sender: sender)
        }
    }

    /// Applies the delegate's answer.
    func resolve(_ answer: HandlerChallengeSender.Answer, environment: HandlerEnvironment) -> Resolution {
        lock.withLock {
            guard spaceIndex < spaces.count else { return .giveUp }
            let space = spaces[spaceIndex]
            switch answer {
            case .use(let credential):
                guard credential.user != nil else { return .giveUp }
                return retry(with: credential, in: space, storeWhenAccepted: credential.persistence != .none)
            case .withoutCredential:
                return .giveUp
            case .cancel:
                challenging = false
                return .cancel
            case .defaultHandling:
                guard (failures[space] ?? 0) == 0, let credential = defaultCredential(for: space, environment: environment) else {
                    return .giveUp
                }
                return retry(with: credential, in: space, storeWhenAccepted: false)
            case .rejectProtectionSpace:
                spaceIndex += 1
                return spaceIndex < spaces.count ? .nextSpace : .giveUp
            }
        }
    }

    private func retry(with credential: URLCredential, in space: URLProtectionSpace, storeWhenAccepted: Bool) -> Resolution {
        let attempt = Attempt(credential: credential, space: space, storeWhenAccepted: storeWhenAccepted)
        if space.isProxy() { proxyAttempt = attempt } else { serverAttempt = attempt }
        challenging = false
        failureResponse = nil
        failureBody = Data()
        return .retry
    }

    private func defaultCredential(for space: URLProtectionSpace, environment: HandlerEnvironment) -> URLCredential? {
        if let stored = environment.credentialStorage?.defaultCredential(for: space) { return stored }
        if let url = requestURL, let user = url.user, !space.isProxy() {
            return URLCredential(user: user.removingPercentEncoding ?? user,
                                 password: (url.password ?? "").removingPercentEncoding ?? "", persistence: .none)
        }
        return nil
    }

    /// The 401/407 response and body, to deliver as the final result; ends the challenge.
    func takeFailure() -> (HTTPURLResponse, Data)? {
        lock.withLock {
            defer { challenging = false; failureResponse = nil; failureBody = Data() }
            guard let response = failureResponse else { return nil }
            return (response, failureBody)
        }
    }

    /// Whether the next attempt sends a credential to the server (libcurl then adds
    /// `Authorization`).
    var sendsServerCredential: Bool {
        lock.withLock { serverAttempt?.credential.user != nil }
    }

    /// The credential being sent to the server and its authentication method, for a caller that
    /// writes `Authorization` itself (the WebSocket handshake).
    var serverCredential: (credential: URLCredential, method: String)? {
        lock.withLock { serverAttempt.map { ($0.credential, $0.method) } }
    }

    /// The proxy credential being sent, as libcurl takes it (user, password, `CURLAUTH_*` mask),
    /// for other connections to the same proxy (the server-trust probe).
    var proxyCredential: ProxyCredential? {
        guard let attempt = lock.withLock({ proxyAttempt }), let user = attempt.credential.user else { return nil }
        return ProxyCredential(user: user, password: attempt.credential.password ?? "", mask: Self.mask(for: attempt.method))
    }

    private static func mask(for method: String) -> Int {
        switch method {
        case NSURLAuthenticationMethodHTTPDigest: courier_auth_digest
        case NSURLAuthenticationMethodNTLM: courier_auth_ntlm
        case NSURLAuthenticationMethodNegotiate: courier_auth_negotiate
        default: courier_auth_basic
        }
    }

    /// Sets the server's and the proxy's credentials (those there are) on `transfer`.
    func apply(to transfer: CurlTransfer) {
        if let attempt = lock.withLock({ serverAttempt }), let user = attempt.credential.user {
            transfer.set(CURLOPT_USERNAME, user)
            transfer.set(CURLOPT_PASSWORD, attempt.credential.password ?? "")
            transfer.set(CURLOPT_HTTPAUTH, Self.mask(for: attempt.method))
        }
        if let proxy = proxyCredential {
            transfer.set(CURLOPT_PROXYUSERNAME, proxy.user)
            transfer.set(CURLOPT_PROXYPASSWORD, proxy.password)
            transfer.set(CURLOPT_PROXYAUTH, proxy.mask)
        }
    }
}
