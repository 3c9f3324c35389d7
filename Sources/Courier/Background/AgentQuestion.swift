import Foundation

/// Something the agent asks the connected app about a running transfer, as Apple's daemon asks a
/// running app's delegate: a redirect to follow or not, a challenge to answer, an upload's response
/// to take or not, a delayed task to start or not. Sent in an
/// ``AgentEvent`` (never stored: with no app connected the agent decides alone) and answered with
/// ``AgentRequest/answer(question:_:)``.
package enum AgentQuestion: Codable, Sendable, Equatable {
    /// `willPerformHTTPRedirection`: the redirect response and the request the agent would send.
    case redirect(response: AgentResponseRecord, request: AgentRequestRecord)
    /// `didReceive challenge`: server trust, HTTP authentication or a client certificate.
    case challenge(AgentChallengeRecord)
    /// `urlSession(_:dataTask:didReceive:completionHandler:)`: an upload task's response (upload
    /// tasks are data tasks; download tasks never get it).
    case response(AgentResponseRecord)
    /// `willBeginDelayedRequest`: a task with an `earliestBeginDate` is due, with this request.
    case delayedRequest(AgentRequestRecord)

    /// What the agent does when the app cannot decide (the task is not the app's any more): follow
    /// the redirect, default handling, take the response, start the delayed request.
    package var defaultAnswer: AgentAnswer {
        switch self {
        case .redirect(_, let request): .redirect(request, nil)
        case .challenge: .defaultHandling
        case .response: .response(allow: true)
        case .delayedRequest: .continueLoading
        }
    }
}

/// A challenge as the agent sends it to the app.
package struct AgentChallengeRecord: Codable, Sendable, Equatable {
    /// The protection space's host, port and protocol.
    package var host: String
    package var port: Int
    package var `protocol`: String?
    /// The realm (HTTP authentication).
    package var realm: String?
    /// `NSURLAuthenticationMethod…`.
    package var authenticationMethod: String
    /// How many times the agent's answers failed before for this task.
    package var previousFailureCount: Int
    /// A server-trust challenge's certificate chain (DER, the server's first), its host and why it
    /// was not trusted.
    package var certificates: [Data]?
    package var trustHost: String?
    package var trustFailure: String?

    /// The record of `challenge`.
    package init(_ challenge: URLAuthenticationChallenge) {
        let space = challenge.protectionSpace
        host = space.host
        port = space.port
        `protocol` = space.protocol
        realm = space.realm
        authenticationMethod = space.authenticationMethod
        previousFailureCount = challenge.previousFailureCount
        certificates = space.serverTrust?.certificates
        trustHost = space.serverTrust?.host
        trustFailure = space.serverTrust?.failureReason
    }

    /// The protection space again.
    var protectionSpace: URLProtectionSpace {
        if let certificates {
            return URLProtectionSpace(host: host, port: port, protocol: self.protocol,
                                      serverTrust: SecTrust(certificates: certificates, host: trustHost ?? host, failureReason: trustFailure))
        }
        return URLProtectionSpace(host: host, port: port, protocol: self.protocol, realm: realm, authenticationMethod: authenticationMethod)
    }
}

/// The app's answer to an ``AgentQuestion``.
package enum AgentAnswer: Codable, Sendable, Equatable {
    /// To a redirect: the request to send instead (with its credentials, kept in memory only), or
    /// `nil` not to follow it.
    case redirect(AgentRequestRecord?, AgentRequestSecrets?)
    /// `.useCredential` with a user and password (`URLCredential.Persistence`'s raw value).
    case useCredential(user: String, password: String, persistence: UInt)
    /// `.useCredential` with `URLCredential(trust:)`: the server is accepted.
    case trustServer
    /// `.useCredential` without a credential.
    case withoutCredential
    /// `.performDefaultHandling`.
    case defaultHandling
    /// `.cancelAuthenticationChallenge`.
    case cancel
    /// `.rejectProtectionSpace`.
    case rejectProtectionSpace
    /// `.useCredential` with `URLCredential(clientCertificateURL:privateKeyURL:passphrase:persistence:)`:
    /// the files' paths (the agent runs as the same user and reads them itself; no key material
    /// travels), and the passphrase, which the agent keeps in memory only.
    case useClientCertificate(certificate: String, privateKey: String?, passphrase: String?, persistence: UInt)
    /// To a response: `.allow` (`true`) or `.cancel` (`false`).
    case response(allow: Bool)
    /// To a delayed request: `.continueLoading`.
    case continueLoading
    /// To a delayed request: `.useNewRequest` with this request (its credentials kept in memory only).
    case useNewRequest(AgentRequestRecord, AgentRequestSecrets?)
    /// To a delayed request: `.cancel`.
    case cancelDelayedRequest

    /// The answer for a delegate's disposition and credential.
    init(_ disposition: URLSession.AuthChallengeDisposition, _ credential: URLCredential?) {
        switch disposition {
        case .useCredential:
            if credential?.trust != nil {
                self = .trustServer
            } else if let credential, let files = credential.clientCertificate {
                self = .useClientCertificate(certificate: files.certificate.absoluteURL.path, privateKey: files.privateKey?.absoluteURL.path,
                                             passphrase: files.passphrase, persistence: credential.persistence.rawValue)
            } else if let credential, let user = credential.user {
                self = .useCredential(user: user, password: credential.password ?? "", persistence: credential.persistence.rawValue)
            } else {
                self = .withoutCredential
            }
        case .performDefaultHandling: self = .defaultHandling
        case .cancelAuthenticationChallenge: self = .cancel
        case .rejectProtectionSpace: self = .rejectProtectionSpace
        }
    }
}
