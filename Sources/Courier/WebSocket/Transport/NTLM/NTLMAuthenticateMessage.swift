/// NTLM's third message, AUTHENTICATE (MS-NLMP §2.2.1.3), with an NTLMv2 response
/// (``NTLMv2Response``): the 64-byte header (no Version, no MIC), then the domain, user and
/// workstation in UTF-16LE and the LM and NT responses. No session key is exchanged (Courier asks
/// for no signing or sealing).
///
/// NTLMv2 only: a challenge without target info is refused (``NTLMFailure/noTargetInfo``). The
/// timestamp is the challenge's MsvAvTimestamp when it has one (then the LM response is 24 zero
/// bytes, as §3.1.5.1.2 asks), else the current time.
enum NTLMAuthenticateMessage {
    /// The length of the header before the payload.
    private static let headerLength = 64

    /// The message answering `challenge`.
    /// - Parameters:
    ///   - name: the credential's user, split into domain and user.
    ///   - clientChallenge: 8 random bytes.
    ///   - now: the current time as a FILETIME, used when the challenge has no timestamp.
    ///   - workstation: the workstation name sent (empty by default).
    static func bytes(answering challenge: NTLMChallengeMessage, name: NTLMUserName, password: String,
                      clientChallenge: [UInt8], now: UInt64, workstation: String = "") throws(NTLMFailure) -> [UInt8] {
        guard let targetInfo = challenge.targetInfo else { throw .noTargetInfo }
        guard challenge.flags.contains(.unicode) else { throw .noUnicode }
        guard let ntowf = NTLMv2Response.ntowfv2(password: password, user: name.user, domain: name.domain),
              let response = NTLMv2Response(ntowf: ntowf, serverChallenge: challenge.serverChallenge, clientChallenge: clientChallenge,
                                            timestamp: challenge.timestamp ?? now, targetInfo: targetInfo) else {
            throw .cryptoFailed
        }
        let lm = challenge.timestamp == nil ? response.lmResponse : [UInt8](repeating: 0, count: 24)
        let flags = challenge.flags.intersection(NTLMNegotiateFlags.client).union([.unicode, .ntlm]).subtracting(.oem)
        // In the order of the header's fields: LM, NT, domain, user, workstation, session key.
        let fields: [[UInt8]] = [lm, response.ntResponse, NTLMWireFormat.utf16LittleEndian(name.domain),
                                 NTLMWireFormat.utf16LittleEndian(name.user), NTLMWireFormat.utf16LittleEndian(workstation), []]
        guard fields.allSatisfy({ $0.count <= Int(UInt16.max) }),
              headerLength + fields.reduce(0, { $0 + $1.count }) <= Int(UInt32.max) else { throw .tooLong }
        var message = NTLMWireFormat.signature
        NTLMWireFormat.append(UInt32(3), to: &message)
        var offset = headerLength
        for field in fields {
            NTLMWireFormat.append(UInt16(field.count), to: &message)
            NTLMWireFormat.append(UInt16(field.count), to: &message)
            NTLMWireFormat.append(UInt32(offset), to: &message)
            offset += field.count
        }
        NTLMWireFormat.append(flags.rawValue, to: &message)
        for field in fields { message += field }
        return message
    }
}
