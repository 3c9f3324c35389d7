import Foundation

/// MD5 (RFC 1321), for the test servers' HTTP Digest authentication: Foundation on Linux has no
/// MD5, and the tests add no package. Not for anything but tests.
enum TestMD5 {
    /// Per-round left-rotation amounts (RFC 1321, section 3.4).
    private static let shifts: [UInt32] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
        5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
        4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
        6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ]

    /// T[i] = floor(2^32 · |sin(i + 1)|) (RFC 1321, section 3.4).
    private static let sines: [UInt32] = (0..<64).map { index in
        UInt32(truncatingIfNeeded: Int64((abs(sin(Double(index + 1))) * 4_294_967_296).rounded(.down)))
    }

    /// The 16-byte digest of `data`.
    static func digest(_ data: Data) -> [UInt8] {
        var message = [UInt8](data)
        let bitLength = UInt64(message.count) &* 8
        message.append(0x80)
        while message.count % 64 != 56 { message.append(0) }
        for shift in stride(from: 0, to: 64, by: 8) { message.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }

        var a0: UInt32 = 0x6745_2301
        var b0: UInt32 = 0xefcd_ab89
        var c0: UInt32 = 0x98ba_dcfe
        var d0: UInt32 = 0x1032_5476
        var words = [UInt32](repeating: 0, count: 16)
        for block in stride(from: 0, to: message.count, by: 64) {
            for index in 0..<16 {
                let base = block + index * 4
                words[index] = UInt32(message[base]) | UInt32(message[base + 1]) << 8
                    | UInt32(message[base + 2]) << 16 | UInt32(message[base + 3]) << 24
            }
            var (a, b, c, d) = (a0, b0, c0, d0)
            for step in 0..<64 {
                let mixed: UInt32
                let wordIndex: Int
                switch step {
                case 0..<16: mixed = (b & c) | (~b & d); wordIndex = step
                case 16..<32: mixed = (d & b) | (~d & c); wordIndex = (5 * step + 1) % 16
                case 32..<48: mixed = b ^ c ^ d; wordIndex = (3 * step + 5) % 16
                default: mixed = c ^ (b | ~d); wordIndex = (7 * step) % 16
                }
                let sum = a &+ mixed &+ sines[step] &+ words[wordIndex]
                (a, d, c) = (d, c, b)
                b = b &+ (sum << shifts[step] | sum >> (32 - shifts[step]))
            }
            a0 = a0 &+ a
            b0 = b0 &+ b
            c0 = c0 &+ c
            d0 = d0 &+ d
        }
        return [a0, b0, c0, d0].flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> UInt32($0 * 8)) } }
    }

    /// The digest of `text`'s UTF-8 bytes as 32 lowercase hex digits (Digest authentication's form).
    static func hex(_ text: String) -> String {
        digest(Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
