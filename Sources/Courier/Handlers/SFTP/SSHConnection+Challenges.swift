internal import CSSH2
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
/// The delegate's part in setting up an SSH connection: the unknown-host-key challenge and the
/// login challenges, asked through the first job still waiting, and answered on the loop thread.
extension SSHConnection {
    // MARK: Challenges

    /// The job that presents the connection's challenges: the first one still waiting.
    private func pickChallengeOwner() -> SFTPJob? {
        waiting.first { $0.challengePresenter != nil }
    }

    /// Asks the delegate about an unknown host's key (`recordingFailure`: why `.acceptNew` could
    /// not record it).
    func presentHostKeyChallenge(_ hostKey: SSHHostKey, recordingFailure: String?) {
        guard let owner = pickChallengeOwner(), let presenter = owner.challengePresenter else {
            beginClosing(failing: nil)
            return
        }
        let name = key.knownHostsName
        let description = "The host key of \(name) (\(hostKey.type) \(hostKey.fingerprint)) is not known: it is not in the "
            + "known-hosts file\(recordingFailure.map { ", and it could not be recorded there. \($0)" } ?? ".") "
            + "Only URLCredential(sshHostKeyFingerprint: \"\(hostKey.fingerprint)\") accepts it."
        let error = URLError(.serverCertificateUntrusted, url: owner.url, description: description)
        let space = URLProtectionSpace(host: key.host, port: key.port, protocol: "sftp", realm: hostKey.realm,
                                       authenticationMethod: NSURLAuthenticationMethodSSHHostKey)
        let token = beginChallenge(owner: owner)
        presenter.presentChallenge(space: space, proposed: nil, failureCount: 0, error: error) { [weak self, weak loop] answer in
            let connection = self
            _ = loop?.execute { connection?.hostKeyAnswered(answer, token: token, hostKey: hostKey, error: error) }
        }
    }

    private func hostKeyAnswered(_ answer: HandlerChallengeSender.Answer, token: Int, hostKey: SSHHostKey, error: URLError) {
        guard let owner = endChallenge(token: token), phase == .verifyingHostKey else { return }
        switch answer {
        case .use(let credential) where hostKey.hasFingerprint && credential.sshHostKeyFingerprint == hostKey.fingerprint:
            // Only a credential naming this very key accepts it.
            pool?.acceptedHostKeys.accept(hostKey, for: key.knownHostsName)
            beginAuthentication()
        case .cancel:
            abandonSetup(cancelling: owner)
        case .use, .withoutCredential, .defaultHandling, .rejectProtectionSpace:
            failSetup(error)
        }
    }

    func presentAuthenticationChallenge(_ authentication: SSHAuthentication) {
        guard let owner = pickChallengeOwner(), let presenter = owner.challengePresenter else {
            failSetup(authentication.exhaustedError())
            return
        }
        let error: URLError? = authentication.failureCount > 0 || authentication.lastFailure != nil
            ? authentication.exhaustedError() : nil
        let token = beginChallenge(owner: owner)
        presenter.presentChallenge(space: authentication.protectionSpace, proposed: authentication.lastFailedCredential,
                                   failureCount: authentication.failureCount, error: error) { [weak self, weak loop] answer in
            let connection = self
            _ = loop?.execute { connection?.authenticationAnswered(answer, token: token) }
        }
    }

    private func authenticationAnswered(_ answer: HandlerChallengeSender.Answer, token: Int) {
        guard let owner = endChallenge(token: token), phase == .authenticating, let authentication else { return }
        switch answer {
        case .use(let credential):
            if !authentication.add(credential) { failSetup(authentication.exhaustedError()) }
        case .defaultHandling:
            if !authentication.addStoredCredential() { failSetup(authentication.exhaustedError()) }
        case .withoutCredential, .rejectProtectionSpace:
            failSetup(authentication.exhaustedError())
        case .cancel:
            abandonSetup(cancelling: owner)
        }
    }

    /// Marks a challenge as pending (no setup deadline while the delegate decides).
    private func beginChallenge(owner: SFTPJob) -> Int {
        challengeToken += 1
        challengeOwner = owner
        setupDeadline = nil
        return challengeToken
    }

    /// Ends the pending challenge if `token` is it; its owner.
    private func endChallenge(token: Int) -> SFTPJob? {
        guard token == challengeToken, let owner = challengeOwner else { return nil }
        challengeOwner = nil
        setupDeadline = Date().addingTimeInterval(timeout)
        return owner
    }
}
