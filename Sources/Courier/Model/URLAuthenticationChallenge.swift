import Foundation

/// A request for authentication from a server or proxy, with everything known about it.
///
/// Challenges are immutable. They reach a session delegate, which answers through the
/// completion handler it is given (or, for `URLProtocol`-level code, through `sender`).
open class URLAuthenticationChallenge: NSObject, @unchecked Sendable {
    // Immutable after `init`, which keeps the `@unchecked Sendable` promise.
    private let _protectionSpace: URLProtectionSpace
    private let _proposedCredential: URLCredential?
    private let _previousFailureCount: Int
    private let _failureResponse: URLResponse?
    private let _error: (any Error)?
    private let _sender: (any URLAuthenticationChallengeSender)?

    /// Creates a challenge.
    ///
    /// - Parameters:
    ///   - space: The protection space asking for authentication.
    ///   - credential: A credential to suggest, such as the storage's default or one from the URL.
    ///   - previousFailureCount: How many earlier attempts for this space failed.
    ///   - response: The response that raised the challenge (for HTTP, the 401 or 407), if any.
    ///   - error: The error of the last failed attempt, if any.
    ///   - sender: The object that receives the answer.
    public init(protectionSpace space: URLProtectionSpace, proposedCredential credential: URLCredential?, previousFailureCount: Int, failureResponse response: URLResponse?, error: (any Error)?, sender: any URLAuthenticationChallengeSender) {
        _protectionSpace = space
        _proposedCredential = credential
        _previousFailureCount = previousFailureCount
        _failureResponse = response
        _error = error
        _sender = sender
        super.init()
    }

    /// Creates a copy of another challenge that answers to a different sender.
    ///
    /// - Parameters:
    ///   - challenge: The challenge to copy.
    ///   - sender: The object that receives the answer.
    public init(authenticationChallenge challenge: URLAuthenticationChallenge, sender: any URLAuthenticationChallengeSender) {
        _protectionSpace = challenge.protectionSpace
        _proposedCredential = challenge.proposedCredential
        _previousFailureCount = challenge.previousFailureCount
        _failureResponse = challenge.failureResponse
        _error = challenge.error
        _sender = sender
        super.init()
    }

    /// The protection space asking for authentication.
    open var protectionSpace: URLProtectionSpace { _protectionSpace }

    /// A suggested credential, or `nil`.
    open var proposedCredential: URLCredential? { _proposedCredential }

    /// How many earlier attempts for this protection space failed.
    open var previousFailureCount: Int { _previousFailureCount }

    /// The response that raised the challenge, if any.
    open var failureResponse: URLResponse? { _failureResponse }

    /// The error of the last failed attempt, if any.
    open var error: (any Error)? { _error }

    /// The object that receives the answer.
    open var sender: (any URLAuthenticationChallengeSender)? { _sender }
}
