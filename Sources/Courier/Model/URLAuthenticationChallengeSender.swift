import Foundation

/// The object that receives the answer to a `URLAuthenticationChallenge`.
///
/// Courier's loading layer implements it; each call settles the challenge one way.
public protocol URLAuthenticationChallengeSender: NSObjectProtocol, Sendable {

    /// Answers the challenge with a credential.
    ///
    /// - Parameters:
    ///   - credential: The credential to authenticate with.
    ///   - challenge: The challenge being answered.
    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge)

    /// Goes on without authenticating; the server's failure response is then delivered.
    ///
    /// - Parameter challenge: The challenge being answered.
    func continueWithoutCredential(for challenge: URLAuthenticationChallenge)

    /// Cancels the load that raised the challenge.
    ///
    /// - Parameter challenge: The challenge being answered.
    func cancel(_ challenge: URLAuthenticationChallenge)

    /// Lets the system handle the challenge as if no one had been asked.
    ///
    /// - Parameter challenge: The challenge being answered.
    func performDefaultHandling(for challenge: URLAuthenticationChallenge)

    /// Refuses this protection space and lets the next challenge, if any, be tried.
    ///
    /// - Parameter challenge: The challenge being answered.
    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge)
}
