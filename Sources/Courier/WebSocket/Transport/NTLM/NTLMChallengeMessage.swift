/// NTLM's second message, CHALLENGE (MS-NLMP §2.2.1.2), read defensively: the server's flags, its
/// 8-byte challenge and its TargetInfo (the AV pairs, §2.2.2.1) with the MsvAvTimestamp among them.
///
/// Every offset and length is checked against the message's bytes; a message that is too short,
/// lacks the signature or type, points outside itself, or has AV pairs that run past their field
/// or lack the MsvAvEOL terminator is not a challenge (`init` answers `nil`).
struct NTLMChallengeMessage: Equatable, Sendable {
    /// The flags the server granted.
    let flags: NTLMNegotiateFlags
    /// The server's 8-byte challenge.
    let serverChallenge: [UInt8]
    /// The TargetInfo AV pairs as sent (terminator included), `nil` when the server sent none.
    let targetInfo: [UInt8]?
    /// The MsvAvTimestamp of the target info (a FILETIME: 100 ns since 1601), when present.
    let timestamp: UInt64?

    /// The AV pair ids this reader looks at.
    private enum AVPair {
        static let end: UInt16 = 0
        static let timestamp: UInt16 = 7
    }

    /// Reads `bytes`; `nil` when they are not a well-formed CHALLENGE message.
    init?(bytes: [UInt8]) {
        // Signature, type, TargetNameFields, flags, challenge: 32 bytes at least.
        guard bytes.count >= 32, bytes.starts(with: NTLMWireFormat.signature),
              NTLMWireFormat.uint32(bytes, at: 8) == 2,
              NTLMWireFormat.field(bytes, at: 12) != nil,
              let rawFlags = NTLMWireFormat.uint32(bytes, at: 20) else { return nil }
        flags = NTLMNegotiateFlags(rawValue: rawFlags)
        serverChallenge = Array(bytes[24..<32])
        // TargetInfoFields (after 8 reserved bytes) exist only in a message long enough for them.
        guard flags.contains(.targetInfo), bytes.count >= 48 else {
            targetInfo = nil
            timestamp = nil
            return
        }
        guard let field = NTLMWireFormat.field(bytes, at: 40) else { return nil }
        guard !field.isEmpty else {
            targetInfo = nil
            timestamp = nil
            return
        }
        let pairs = Array(field)
        guard case .wellFormed(let found) = Self.read(pairs: pairs) else { return nil }
        targetInfo = pairs
        timestamp = found
    }

    /// What walking the AV pairs found.
    private enum PairsReading {
        /// The pairs end with MsvAvEOL; the timestamp among them, if any.
        case wellFormed(timestamp: UInt64?)
        /// A pair runs past the field, a timestamp is not 8 bytes, or no terminator came.
        case malformed
    }

    /// Walks the AV pairs to their MsvAvEOL.
    private static func read(pairs: [UInt8]) -> PairsReading {
        var offset = 0
        var timestamp: UInt64?
        while let id = NTLMWireFormat.uint16(pairs, at: offset), let length = NTLMWireFormat.uint16(pairs, at: offset + 2) {
            let value = offset + 4
            guard value + Int(length) <= pairs.count else { return .malformed }
            switch id {
            case AVPair.end:
                return .wellFormed(timestamp: timestamp)
            case AVPair.timestamp:
                guard length == 8, let low = NTLMWireFormat.uint32(pairs, at: value),
                      let high = NTLMWireFormat.uint32(pairs, at: value + 4) else { return .malformed }
                timestamp = UInt64(low) | UInt64(high) << 32
            default:
                break
            }
            offset = value + Int(length)
        }
        return .malformed
    }
}
