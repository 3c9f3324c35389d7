/// The 4-byte key a client XORs over a frame's payload (RFC 6455 §5.3). The client picks a fresh,
/// unpredictable key for every frame, so a script cannot choose the bytes an intermediary sees.
struct WebSocketMaskingKey: Equatable, Sendable {
    /// The key's four bytes, first to last, packed big-endian (the order they are sent in).
    let value: UInt32

    /// The key with these four bytes, in the order they appear on the wire.
    init(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8) {
        value = UInt32(b0) << 24 | UInt32(b1) << 16 | UInt32(b2) << 8 | UInt32(b3)
    }

    /// A key drawn from `generator` (the system's cryptographic generator in production).
    static func random(using generator: inout some RandomNumberGenerator) -> WebSocketMaskingKey {
        let value = generator.next() as UInt32
        return WebSocketMaskingKey(UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
                                   UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value))
    }

    /// The key's byte at `index` modulo 4.
    func byte(at index: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32(index & 3)))
    }

    /// XORs the key over `bytes`, whose first byte is payload byte 0. Masking twice unmasks.
    func apply(to bytes: UnsafeMutableRawBufferPointer) {
        apply(from: UnsafeRawBufferPointer(bytes), to: bytes)
    }

    /// Writes `source` XOR the key into `destination` (at least as long; the same memory is
    /// allowed), `source`'s first byte being payload byte 0: copying and masking in one pass.
    ///
    /// Eight bytes at a time: the key repeated twice, laid out in memory in wire order, is one
    /// `UInt64` whose XOR with an unaligned load does eight bytes at once.
    func apply(from source: UnsafeRawBufferPointer, to destination: UnsafeMutableRawBufferPointer) {
        guard let input = source.baseAddress, let output = destination.baseAddress else { return }
        let count = min(source.count, destination.count)
        var word: UInt64 = 0
        withUnsafeMutableBytes(of: &word) { wordBytes in
            for index in 0..<8 { wordBytes[index] = byte(at: index) }
        }
        var offset = 0
        while offset + 8 <= count {
            let loaded = input.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            output.storeBytes(of: loaded ^ word, toByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        while offset < count {
            let masked = input.load(fromByteOffset: offset, as: UInt8.self) ^ byte(at: offset)
            output.storeBytes(of: masked, toByteOffset: offset, as: UInt8.self)
            offset += 1
        }
    }
}
