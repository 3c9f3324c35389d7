/// The byte layout NTLM's messages share (MS-NLMP §2.2): the `NTLMSSP\0` signature, little-endian
/// integers, and "fields" (a length, a maximum length and an offset, 8 bytes) that point into the
/// message's payload. Reading checks every offset and length against the message's bytes and
/// answers `nil` for anything outside them, so a malformed message never reads out of bounds.
enum NTLMWireFormat {
    /// The signature that starts every NTLM message.
    static let signature: [UInt8] = Array("NTLMSSP".utf8) + [0]

    /// The little-endian `UInt16` at `offset`, or `nil` when the bytes end first.
    static func uint16(_ bytes: [UInt8], at offset: Int) -> UInt16? {
        guard offset >= 0, offset <= bytes.count - 2 else { return nil }
        return UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    /// The little-endian `UInt32` at `offset`, or `nil` when the bytes end first.
    static func uint32(_ bytes: [UInt8], at offset: Int) -> UInt32? {
        guard let low = uint16(bytes, at: offset), let high = uint16(bytes, at: offset + 2) else { return nil }
        return UInt32(low) | UInt32(high) << 16
    }

    /// The bytes the field described at `offset` points to, or `nil` when the field itself or the
    /// bytes it names lie outside `bytes`. An empty field is empty whatever its offset says.
    static func field(_ bytes: [UInt8], at offset: Int) -> ArraySlice<UInt8>? {
        guard let length = uint16(bytes, at: offset), let start = uint32(bytes, at: offset + 4) else { return nil }
        guard length > 0 else { return [] }
        let lower = Int(start), upper = Int(start) + Int(length)
        guard upper <= bytes.count else { return nil }
        return bytes[lower..<upper]
    }

    /// Appends `value` little-endian.
    static func append(_ value: UInt16, to bytes: inout [UInt8]) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
    }

    /// Appends `value` little-endian.
    static func append(_ value: UInt32, to bytes: inout [UInt8]) {
        append(UInt16(truncatingIfNeeded: value), to: &bytes)
        append(UInt16(truncatingIfNeeded: value >> 16), to: &bytes)
    }

    /// Appends `value` little-endian.
    static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        append(UInt32(truncatingIfNeeded: value), to: &bytes)
        append(UInt32(truncatingIfNeeded: value >> 32), to: &bytes)
    }

    /// `text` as UTF-16LE, NTLM's Unicode strings.
    static func utf16LittleEndian(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf16.count * 2)
        for unit in text.utf16 { append(unit, to: &bytes) }
        return bytes
    }
}
