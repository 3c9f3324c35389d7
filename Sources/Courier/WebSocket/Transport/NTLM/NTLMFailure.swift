/// Why Courier cannot answer a server's NTLM challenge.
enum NTLMFailure: Error, Equatable, Sendable {
    /// The CHALLENGE message is not well-formed (``NTLMChallengeMessage``).
    case malformedChallenge
    /// The CHALLENGE has no target info: answering it would take an NTLMv1 or LM response, which
    /// Courier does not send (Documentation/Security.md).
    case noTargetInfo
    /// The server does not accept Unicode strings (Courier sends no OEM code page strings).
    case noUnicode
    /// A field of the answer would be longer than NTLM's 16-bit lengths allow.
    case tooLong
    /// OpenSSL failed to compute a digest.
    case cryptoFailed

    /// A sentence for the task's error.
    var explanation: String {
        switch self {
        case .malformedChallenge:
            "the server's NTLM challenge message is malformed"
        case .noTargetInfo:
            "the server's NTLM challenge has no target information, which only NTLMv1 or LM could answer; "
                + "Courier sends NTLMv2 only"
        case .noUnicode:
            "the server's NTLM challenge does not allow Unicode strings"
        case .tooLong:
            "the NTLM answer would exceed the message format's field lengths"
        case .cryptoFailed:
            "OpenSSL could not compute the NTLM response"
        }
    }
}
