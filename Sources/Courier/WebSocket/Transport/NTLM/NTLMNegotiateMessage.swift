/// NTLM's first message, NEGOTIATE (MS-NLMP §2.2.1.1): the client's flags
/// (``NTLMNegotiateFlags/client``), with no domain and no workstation (both fields empty, so no
/// Version field either).
enum NTLMNegotiateMessage {
    /// The message's 32 bytes.
    static let bytes: [UInt8] = {
        var bytes = NTLMWireFormat.signature
        NTLMWireFormat.append(UInt32(1), to: &bytes)
        NTLMWireFormat.append(NTLMNegotiateFlags.client.rawValue, to: &bytes)
        // DomainNameFields and WorkstationFields: empty, pointing at the end of the message.
        for _ in 0..<2 {
            NTLMWireFormat.append(UInt16(0), to: &bytes)
            NTLMWireFormat.append(UInt16(0), to: &bytes)
            NTLMWireFormat.append(UInt32(32), to: &bytes)
        }
        return bytes
    }()
}
