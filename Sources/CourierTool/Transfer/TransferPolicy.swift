import Foundation
import Courier

/// A user name and password, from `-u` or a netrc file.
struct Login: Sendable, Equatable {
    let user: String
    let password: String

    /// Splits `user:password` at the first colon; nil without one.
    init?(argument: String) {
        guard let colon = argument.firstIndex(of: ":") else { return nil }
        user = String(argument[..<colon])
        password = String(argument[argument.index(after: colon)...])
    }

    init(user: String, password: String) {
        self.user = user
        self.password = password
    }
}

/// How a fetch answers what the session asks its delegate: redirects (`-L`, `--max-redirs`) and
/// challenges (`-u`/`-n` logins, `-k`).
struct TransferPolicy: Sendable {
    /// The login to answer authentication challenges with, once per protection space.
    var login: Login?
    /// The only host the login is given to (curl does not send it to other hosts after a redirect).
    var loginHost: String?
    /// `-k`: accept any TLS server certificate and any SSH host key.
    var insecure = false
    /// Whether redirects are followed; the embedded default run follows them as the library does.
    var followRedirects = true
    /// `--max-redirs`: the most redirects followed, nil for the library's own cap.
    var maxRedirects: Int?

    /// The answer to `challenge`.
    func answer(_ challenge: URLAuthenticationChallenge) -> (URLSession.AuthChallengeDisposition, URLCredential?) {
        let space = challenge.protectionSpace
        switch space.authenticationMethod {
        case NSURLAuthenticationMethodServerTrust:
            guard insecure, let trust = space.serverTrust else { return (.performDefaultHandling, nil) }
            return (.useCredential, URLCredential(trust: trust))
        case NSURLAuthenticationMethodSSHHostKey:
            guard insecure, let fingerprint = space.sshHostKeyFingerprint else { return (.performDefaultHandling, nil) }
            return (.useCredential, URLCredential(sshHostKeyFingerprint: fingerprint))
        case NSURLAuthenticationMethodHTTPBasic, NSURLAuthenticationMethodHTTPDigest, NSURLAuthenticationMethodDefault:
            guard let login, challenge.previousFailureCount == 0,
                  loginHost.map({ $0.caseInsensitiveCompare(space.host) == .orderedSame }) ?? true else {
                return (.performDefaultHandling, nil)
            }
            return (.useCredential, URLCredential(user: login.user, password: login.password, persistence: .forSession))
        default:
            return (.performDefaultHandling, nil)
        }
    }
}
