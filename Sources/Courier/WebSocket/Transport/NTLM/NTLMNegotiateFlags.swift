/// The NegotiateFlags of NTLM's messages (MS-NLMP §2.2.2.5): the options the client asks for in
/// its NEGOTIATE message, the server grants in its CHALLENGE, and the client confirms in its
/// AUTHENTICATE. Courier asks for NTLM with extended session security and Unicode strings; it
/// signs and seals nothing (HTTP authentication only), so it never asks for a key exchange.
struct NTLMNegotiateFlags: OptionSet, Sendable, Equatable {
    let rawValue: UInt32

    /// Strings are UTF-16LE.
    static let unicode = Self(rawValue: 0x0000_0001)
    /// Strings in the OEM code page (offered as the alternative to Unicode, as clients do).
    static let oem = Self(rawValue: 0x0000_0002)
    /// The server is asked to send its target name.
    static let requestTarget = Self(rawValue: 0x0000_0004)
    /// NTLM session security (required by every server).
    static let ntlm = Self(rawValue: 0x0000_0200)
    /// A dummy signature is always sent (asked for by every current client).
    static let alwaysSign = Self(rawValue: 0x0000_8000)
    /// NTLM2 session security: with NTLMv2 responses, what current clients ask for.
    static let extendedSessionSecurity = Self(rawValue: 0x0008_0000)
    /// The CHALLENGE carries TargetInfo (the AV pairs an NTLMv2 response needs).
    static let targetInfo = Self(rawValue: 0x0080_0000)
    /// The message carries a Version field.
    static let version = Self(rawValue: 0x0200_0000)
    /// 128-bit session keys.
    static let key128 = Self(rawValue: 0x2000_0000)
    /// An encrypted random session key is exchanged (for signing and sealing; Courier never asks).
    static let keyExchange = Self(rawValue: 0x4000_0000)
    /// 56-bit session keys.
    static let key56 = Self(rawValue: 0x8000_0000)

    /// What Courier's NEGOTIATE asks for.
    static let client: Self = [.unicode, .oem, .requestTarget, .ntlm, .alwaysSign, .extendedSessionSecurity, .key128, .key56]
}
