internal import CCurl
import Foundation

/// One HTTP handler instance's authentication exchange: turns a 401 (server) or 407 (proxy) into
/// `URLAuthenticationChallenge`s, one per scheme the server offers (Basic, Digest, NTLM,
/// Negotiate), keeps the failure response and body until the delegate decides, and applies the
/// chosen credential to the next attempt.
///
/// Default handling uses the session's credential storage (the space's default credential) or the
/// URL's user info, once per protection space; after a failure only the delegate can supply more.
final class HTTPAuthentication: @unchecked Sendable {
    /// What the handler does after the delegate answered.
    enum Resolution { case retry, nextSpace, giveUp, cancel }

    /// The most body bytes of a 401/407 kept for delivery when the app continues without credential.
    static let failureBodyLimit = 1 << 20

    private struct Attempt {
        var credential: URLCredential
        var method: String
        var isProxy: Bool
    }

    private let lock = Lock()
    private var spaces: [URLProtectionSpace] = []
    private var spaceIndex = 0
    private var failureResponse: HTTPURLResponse?
    private var failureBody = Data()
    private var failures: [URLProtectionSpace: Int] = [:]
    private var current: Attempt?
    private var requestURL: URL?
    private var challenging = false

    /// Whether a challenge is being prepared or waits for the delegate.
    var isChallenging: Bool { lock.withLock { challenging } }

    /// Starts a challenge when `response` asks for authentication with a scheme Courier can answer.
    /// `proxy`: for a 407, the proxy that sent it (its protection space names the proxy; the
    /// request's host and port stand in when it is not known).
    func beginChallenge(for response: HTTPURLResponse, request: URLRequest, environment: HandlerEnvironment,
                        proxy: (host: String, port: Int)? = nil) -> Bool {
        let isProxy = response.statusCode == 407
        guard response.statusCode == 401 || isProxy, let url = request.url, let host = url.host else { return false }
        let header = response.value(forHTTPHeaderField: isProxy ? "Proxy-Authenticate" : "WWW-Authenticate") ?? ""
        let scheme = url.scheme?.lowercased() ?? "http"
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        let offered: [URLProtectionSpace] = HTTPAuthenticationHeader.offers(in: header).compactMap { offer in
            guard let method = offer.authenticationMethod else { return nil }
            if isProxy {
                return URLProtectionSpace(proxyHost: proxy?.host ?? host, port: proxy?.port ?? port,
                                          type: scheme == "https" ? NSURLProtectionSpaceHTTPSProxy : NSURLProtectionSpaceHTTPProxy,
                                          realm: offer.realm, authenticationMethod: method)
            }
            return URLProtectionSpace(host: host, port: port, protocol: scheme, realm: offer.realm, authenticationMethod: method)
        }
        guard !offered.isEmpty else { return false }
        lock.withLock {
            spaces = offered
            spaceIndex = 0
            failureResponse = response
            failureBody = Data()
            requestURL = url
            challenging = true
            if let current, let space = offered.first(where: { $0.authenticationMethod == current.method }) {
                failures[space, default: 0] += 1
            }
        }
        return true
    }

    /// Keeps (up to a limit) the body of the 401/407.
    func bufferFailureBody(_ bytes: UnsafeRawBufferPointer) {
        lock.withLock {
            let room = Self.failureBodyLimit - failureBody.count
            if room > 0 { failureBody.append(contentsOf: bytes.prefix(room)) }
        }
    }

    /// The challenge for the current protection space, or `nil` when none is left.
    func makeChallenge(sender: any URLAuthenticationChallengeSender) -> URLAuthenticationChallenge? {
        lock.withLock {
            guard spaceIndex < spaces.count else { return nil }
            let space = spaces[spaceIndex]
            let count = failures[space] ?? 0
            let proposed = current?.credential ?? nil
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
                if credential.persistence != .none { environment.credentialStorage?.set(credential, for: space) }
                return retry(with: credential, in: space)
            case .withoutCredential:
                return .giveUp
            case .cancel:
                challenging = false
                return .cancel
            case .defaultHandling:
                guard (failures[space] ?? 0) == 0, let credential = defaultCredential(for: space, environment: environment) else {
                    return .giveUp
                }
                return retry(with: credential, in: space)
            case .rejectProtectionSpace:
                spaceIndex += 1
                return spaceIndex < spaces.count ? .nextSpace : .giveUp
            }
        }
    }

    private func retry(with credential: URLCredential, in space: URLProtectionSpace) -> Resolution {
        current = Attempt(credential: credential, method: space.authenticationMethod, isProxy: space.isProxy())
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

    /// The response was not a challenge: authentication (if any) worked.
    func succeeded(environment: HandlerEnvironment) {}

    /// The 401/407 response and body, to deliver as the final result; ends the challenge.
    func takeFailure() -> (HTTPURLResponse, Data)? {
        lock.withLock {
            defer { challenging = false; failureResponse = nil; failureBody = Data() }
            guard let response = failureResponse else { return nil }
            return (response, failureBody)
        }
    }

    /// The proxy credential of the current attempt, as libcurl takes it (user, password,
    /// `CURLAUTH_*` mask), for other connections to the same proxy (the server-trust probe).
    var proxyCredential: ProxyCredential? {
        guard let attempt = lock.withLock({ current }), attempt.isProxy, let user = attempt.credential.user else { return nil }
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

    /// Sets the credential of the current attempt on `transfer`.
    func apply(to transfer: CurlTransfer) {
        guard let attempt = lock.withLock({ current }), let user = attempt.credential.user else { return }
        let password = attempt.credential.password ?? ""
        let mask = Self.mask(for: attempt.method)
        if attempt.isProxy {
            transfer.set(CURLOPT_PROXYUSERNAME, user)
            transfer.set(CURLOPT_PROXYPASSWORD, password)
            transfer.set(CURLOPT_PROXYAUTH, mask)
        } else {
            transfer.set(CURLOPT_USERNAME, user)
            transfer.set(CURLOPT_PASSWORD, password)
            transfer.set(CURLOPT_HTTPAUTH, mask)
        }
    }
}
