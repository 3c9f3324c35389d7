internal import CCurl
import Foundation

/// Who an FTP load logs in as, and the authentication challenge when the server refuses the login.
///
/// The first attempt uses, in order: the user and password in the URL; for a URL with a user but no
/// password, that user's credential in `URLCredentialStorage`; the storage's default credential for
/// the server; otherwise anonymous login (libcurl's `anonymous`). When the server refuses (530), the
/// delegate gets a challenge whose protection space has protocol `ftp` (or `ftps`) and method
/// `NSURLAuthenticationMethodDefault`; each refused retry raises another, with `previousFailureCount`
/// counting them.
final class FTPLogin: @unchecked Sendable {
    /// What the handler does after the delegate answered.
    enum Resolution {
        case retry
        case fail(URLError)
    }

    let space: URLProtectionSpace
    private let lock = Lock()
    private var credential: URLCredential?
    private var failures = 0
    private var triedStoredDefault = false
    /// The credential came from the delegate and may be stored once it works.
    private var storeOnSuccess = false

    init?(url: URL, environment: HandlerEnvironment) {
        guard let host = url.host else { return nil }
        space = URLProtectionSpace(host: host, port: url.port ?? TLSServerTrustChallenge.defaultPort(for: url),
                                   protocol: url.scheme?.lowercased() ?? "ftp", realm: nil,
                                   authenticationMethod: NSURLAuthenticationMethodDefault)
        let storage = environment.credentialStorage
        if let user = Self.decoded(url.user) {
            if let password = Self.decoded(url.password) {
                credential = URLCredential(user: user, password: password, persistence: .none)
            } else {
                credential = storage?.credentials(for: space)?[user] ?? URLCredential(user: user, password: "", persistence: .none)
            }
        } else if let stored = storage?.defaultCredential(for: space) {
            credential = stored
            triedStoredDefault = true
        }
    }

    /// Sets the login on `transfer` (nothing for anonymous login).
    func apply(to transfer: CurlTransfer) {
        guard let credential = lock.withLock({ credential }), let user = credential.user else { return }
        transfer.set(CURLOPT_USERNAME, user)
        transfer.set(CURLOPT_PASSWORD, credential.password ?? "")
    }

    /// The challenge for a refused login; counts the failure.
    func makeChallenge(error: URLError, sender: any URLAuthenticationChallengeSender) -> URLAuthenticationChallenge {
        let (proposed, count): (URLCredential?, Int) = lock.withLock {
            defer { failures += 1 }
            return (credential, failures)
        }
        return URLAuthenticationChallenge(protectionSpace: space, proposedCredential: proposed, previousFailureCount: count,
                                          failureResponse: nil, error: error, sender: sender)
    }

    /// Applies the delegate's answer to a refused login.
    func resolve(_ answer: HandlerChallengeSender.Answer, refusal: URLError, environment: HandlerEnvironment) -> Resolution {
        lock.withLock {
            switch answer {
            case .use(let newCredential):
                guard newCredential.user != nil else { return .fail(refusal) }
                credential = newCredential
                storeOnSuccess = newCredential.persistence != .none
                return .retry
            case .defaultHandling:
                guard !triedStoredDefault, let stored = environment.credentialStorage?.defaultCredential(for: space) else {
                    return .fail(refusal)
                }
                triedStoredDefault = true
                credential = stored
                return .retry
            case .cancel:
                return .fail(URLError(.cancelled, url: refusal.failingURL, description: "The login challenge was cancelled."))
            case .withoutCredential, .rejectProtectionSpace:
                return .fail(refusal)
            }
        }
    }

    /// The server accepted the login: a credential the delegate gave with a persistence is stored.
    func succeeded(environment: HandlerEnvironment) {
        let toStore: URLCredential? = lock.withLock {
            defer { storeOnSuccess = false }
            return storeOnSuccess ? credential : nil
        }
        if let toStore { environment.credentialStorage?.set(toStore, for: space) }
    }

    private static func decoded(_ part: String?) -> String? {
        guard let part, !part.isEmpty else { return nil }
        return part.removingPercentEncoding ?? part
    }
}
