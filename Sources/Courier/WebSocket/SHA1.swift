/// SHA-1 (FIPS 180-4), for the one place Courier needs it: `Sec-WebSocket-Accept` (RFC 6455
/// §4.2.2). Foundation on Linux has no digest API, swift-crypto is not a dependency, and Courier
/// does not include OpenSSL's headers, so this small implementation is tested against the FIPS
/// vectors instead. SHA-1 is not collision-resistant; the handshake uses it only to prove the
/// server read the key, which is all RFC 6455 asks of it.
enum SHA1 {
    /// The 20-byte digest of `message`.
    static func hash(_ message: some Collection<UInt8>) -> [UInt8] {
        var state: (UInt32, UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0)
        // The message, a 1 bit, zeros up to 56 mod 64 bytes, and its length in bits (big-endian).
        var padded = Array(message)
        let bitLength = UInt64(padded.count) &* 8
        padded.append(0x80)
        while padded.count % 64 != 56 { padded.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { padded.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }

        var words = [UInt32](repeating: 0, count: 80)
        for blockStart in stride(from: 0, to: padded.count, by: 64) {
            for index in 0..<16 {
                let offset = blockStart + 4 * index
                words[index] = UInt32(padded[offset]) << 24 | UInt32(padded[offset + 1]) << 16
                    | UInt32(padded[offset + 2]) << 8 | UInt32(padded[offset + 3])
            }
            for index in 16..<80 {
                words[index] = rotateLeft(words[index - 3] ^ words[index - 8] ^ words[index - 14] ^ words[index - 16], by: 1)
            }
            var (a, b, c, d, e) = state
            for index in 0..<80 {
                let mixed: UInt32
                let constant: UInt32
                switch index {
                case 0..<20: mixed = (b & c) | (~b & d); constant = 0x5A82_7999
                case 20..<40: mixed = b ^ c ^ d; constant = 0x6ED9_EBA1
                case 40..<60: mixed = (b & c) | (b & d) | (c & d); constant = 0x8F1B_BCDC
                default: mixed = b ^ c ^ d; constant = 0xCA62_C1D6
                }
                let next = rotateLeft(a, by: 5) &+ mixed &+ e &+ constant &+ words[index]
                (e, d, c, b, a) = (d, c, rotateLeft(b, by: 30), a, next)
            }
            state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e)
        }
        var digest: [UInt8] = []
        digest.reserveCapacity(20)
        for word in [state.0, state.1, state.2, state.3, state.4] {
            for shift in stride(from: 24, through: 0, by: -8) { digest.append(UInt8(truncatingIfNeeded: word >> UInt32(shift))) }
        }
        return digest
    }

    private static func rotateLeft(_ value: UInt32, by count: UInt32) -> UInt32 {
        value << count | value >> (32 - count)
    }
}
