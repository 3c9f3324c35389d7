/// The NTLMv2 responses of MS-NLMP §3.3.2, computed from the password:
///
/// - NTOWFv2 = HMAC-MD5(MD4(UTF-16LE(password)), UTF-16LE(uppercase(user) + domain));
/// - the blob (§2.2.2.7): version 1, 6 zero bytes, the timestamp, the client challenge, 4 zero
///   bytes, the server's target info, 4 zero bytes;
/// - NTProofStr = HMAC-MD5(NTOWFv2, server challenge + blob), and the NT response is NTProofStr
///   followed by the blob;
/// - the LMv2 response is HMAC-MD5(NTOWFv2, server challenge + client challenge) followed by the
///   client challenge (sent as 24 zero bytes when the server's target info has a timestamp).
struct NTLMv2Response: Equatable, Sendable {
    /// NTProofStr and the blob.
    let ntResponse: [UInt8]
    /// The LMv2 response (24 bytes).
    let lmResponse: [UInt8]
    /// HMAC-MD5(NTOWFv2, NTProofStr): the session base key (not used for HTTP; kept for the test vectors).
    let sessionBaseKey: [UInt8]

    /// The responses for `serverChallenge`; `nil` when OpenSSL fails.
    /// - Parameters:
    ///   - ntowf: ``ntowfv2(password:user:domain:)``.
    ///   - clientChallenge: 8 random bytes.
    ///   - timestamp: a FILETIME (100 ns since 1601-01-01).
    ///   - targetInfo: the server's AV pairs, as sent.
    init?(ntowf: [UInt8], serverChallenge: [UInt8], clientChallenge: [UInt8], timestamp: UInt64, targetInfo: [UInt8]) {
        var blob: [UInt8] = [1, 1, 0, 0, 0, 0, 0, 0]
        NTLMWireFormat.append(timestamp, to: &blob)
        blob += clientChallenge
        blob += [0, 0, 0, 0]
        blob += targetInfo
        blob += [0, 0, 0, 0]
        guard let proof = NTLMCrypto.hmacMD5(key: ntowf, serverChallenge + blob),
              let lm = NTLMCrypto.hmacMD5(key: ntowf, serverChallenge + clientChallenge),
              let sessionKey = NTLMCrypto.hmacMD5(key: ntowf, proof) else { return nil }
        ntResponse = proof + blob
        lmResponse = lm + clientChallenge
        sessionBaseKey = sessionKey
    }

    /// NTOWFv2 for the password, user and domain; `nil` when OpenSSL fails.
    static func ntowfv2(password: String, user: String, domain: String) -> [UInt8]? {
        guard let hash = NTLMCrypto.md4(NTLMWireFormat.utf16LittleEndian(password)) else { return nil }
        return NTLMCrypto.hmacMD5(key: hash, NTLMWireFormat.utf16LittleEndian(user.uppercased() + domain))
    }

    /// The FILETIME of `seconds` since 1970 (100 ns units since 1601-01-01).
    static func fileTime(secondsSince1970 seconds: Double) -> UInt64 {
        let units = (seconds + 11_644_473_600) * 10_000_000
        guard units.isFinite, units >= 0, units < Double(UInt64.max) else { return 0 }
        return UInt64(units)
    }
}
