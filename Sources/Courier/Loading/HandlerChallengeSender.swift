import Foundation

/// The sender of the challenges built-in handlers (http, ftp, sftp) raise: passes the delegate's answer back to the
/// handler instance that is waiting for it.
final class HandlerChallengeSender: NSObject, URLAuthenticationChallengeSender, @unchecked Sendable {
    /// What the delegate decided.
    enum Answer {
        case use(URLCredential)
        case withoutCredential
        case cancel
        case defaultHandling
        case rejectProtectionSpace
    }

    private let respond: @Sendable (Answer) -> Void
    private let once = OnceFlag()

    init(respond: @escaping @Sendable (Answer) -> Void) {
        self.respond = respond
    }

    private func answer(_ answer: Answer) {
        guard once.claim() else { return }
        respond(answer)
    }

    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) { answer(.use(credential)) }
    func continueWithoutCredential(for challenge: URLAuthenticationChallenge) { answer(.withoutCredential) }
    func cancel(_ challenge: URLAuthenticationChallenge) { answer(.cancel) }
    func performDefaultHandling(for challenge: URLAuthenticationChallenge) { answer(.defaultHandling) }
    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) { answer(.rejectProtectionSpace) }
}
