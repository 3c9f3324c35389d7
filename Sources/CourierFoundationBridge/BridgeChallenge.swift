import Courier
import Foundation
import FoundationNetworking

/// One Courier challenge put to a FoundationNetworking delegate, and its answer mapped back.
///
/// The delegate sees a FoundationNetworking `URLAuthenticationChallenge` with the same protection
/// space (host, port, protocol, realm, method), proposed password credential, failure count,
/// failure response and error. It may answer through its completion handler or, in the older
/// style, through the challenge's `sender` (this object); the first answer counts.
///
/// Mapping a `.useCredential` answer: a password credential becomes Courier's password credential
/// with the same persistence. FoundationNetworking has no SSH host-key credential, so for an
/// `NSURLAuthenticationMethodSSHHostKey` challenge the credential's *password* is taken as the
/// fingerprint to accept (`URLCredential(sshHostKeyFingerprint:)`); the challenge's realm is
/// `"<key type> SHA256:<fingerprint>"`.
final class BridgeChallenge: NSObject, FoundationNetworking.URLAuthenticationChallengeSender, @unchecked Sendable {
    /// The authentication methods a FoundationNetworking delegate cannot answer on Linux (it has
    /// neither `SecTrust` nor client identities): such challenges get default handling.
    static let unanswerableMethods: Set<String> = [Courier.NSURLAuthenticationMethodServerTrust,
                                                    Courier.NSURLAuthenticationMethodClientCertificate]

    typealias Completion = @Sendable (Courier.URLSession.AuthChallengeDisposition, Courier.URLCredential?) -> Void

    private let courierChallenge: Courier.URLAuthenticationChallenge
    private let completion: Locked<Completion?>
    private let fallbackURL: URL

    init(_ challenge: Courier.URLAuthenticationChallenge, fallbackURL: URL, completion: @escaping Completion) {
        courierChallenge = challenge
        self.fallbackURL = fallbackURL
        self.completion = Locked(completion)
    }

    /// FoundationNetworking's view of the challenge, with this object as its sender.
    var foundationChallenge: FoundationNetworking.URLAuthenticationChallenge {
        let space = courierChallenge.protectionSpace
        let foundationSpace = space.isProxy()
            ? FoundationNetworking.URLProtectionSpace(proxyHost: space.host, port: space.port, type: space.proxyType,
                                                      realm: space.realm, authenticationMethod: space.authenticationMethod)
            : FoundationNetworking.URLProtectionSpace(host: space.host, port: space.port, protocol: space.protocol,
                                                      realm: space.realm, authenticationMethod: space.authenticationMethod)
        let proposed = courierChallenge.proposedCredential.flatMap { credential in
            credential.user.map { user in
                FoundationNetworking.URLCredential(user: user, password: credential.password ?? "",
                                                   persistence: Self.foundationPersistence(credential.persistence))
            }
        }
        return FoundationNetworking.URLAuthenticationChallenge(
            protectionSpace: foundationSpace, proposedCredential: proposed,
            previousFailureCount: courierChallenge.previousFailureCount,
            failureResponse: courierChallenge.failureResponse.map {
                FoundationResponseConversion.foundationResponse(from: $0, fallbackURL: fallbackURL)
            },
            error: courierChallenge.error, sender: self)
    }

    /// Passes the delegate's answer to Courier, once.
    func answer(_ disposition: FoundationNetworking.URLSession.AuthChallengeDisposition, _ credential: FoundationNetworking.URLCredential?) {
        guard let completion = completion.withLock({ stored -> Completion? in
            defer { stored = nil }
            return stored
        }) else { return }
        switch disposition {
        case .useCredential: completion(.useCredential, credential.map(courierCredential(from:)))
        case .performDefaultHandling: completion(.performDefaultHandling, nil)
        case .rejectProtectionSpace: completion(.rejectProtectionSpace, nil)
        case .cancelAuthenticationChallenge: completion(.cancelAuthenticationChallenge, nil)
        }
    }

    private func courierCredential(from credential: FoundationNetworking.URLCredential) -> Courier.URLCredential {
        if courierChallenge.protectionSpace.authenticationMethod == Courier.NSURLAuthenticationMethodSSHHostKey {
            return Courier.URLCredential(sshHostKeyFingerprint: credential.password ?? "")
        }
        return Courier.URLCredential(user: credential.user ?? "", password: credential.password ?? "",
                                     persistence: Courier.URLCredential.Persistence(rawValue: credential.persistence.rawValue) ?? .forSession)
    }

    private static func foundationPersistence(_ persistence: Courier.URLCredential.Persistence) -> FoundationNetworking.URLCredential.Persistence {
        FoundationNetworking.URLCredential.Persistence(rawValue: persistence.rawValue) ?? .forSession
    }

    // MARK: URLAuthenticationChallengeSender

    /// Answers `.useCredential` with `credential`.
    func use(_ credential: FoundationNetworking.URLCredential, for challenge: FoundationNetworking.URLAuthenticationChallenge) {
        answer(.useCredential, credential)
    }

    /// Answers `.useCredential` without a credential.
    func continueWithoutCredential(for challenge: FoundationNetworking.URLAuthenticationChallenge) {
        answer(.useCredential, nil)
    }

    /// Answers `.cancelAuthenticationChallenge`.
    func cancel(_ challenge: FoundationNetworking.URLAuthenticationChallenge) {
        answer(.cancelAuthenticationChallenge, nil)
    }

    /// Answers `.performDefaultHandling`.
    func performDefaultHandling(for challenge: FoundationNetworking.URLAuthenticationChallenge) {
        answer(.performDefaultHandling, nil)
    }

    /// Answers `.rejectProtectionSpace`.
    func rejectProtectionSpaceAndContinue(with challenge: FoundationNetworking.URLAuthenticationChallenge) {
        answer(.rejectProtectionSpace, nil)
    }
}
