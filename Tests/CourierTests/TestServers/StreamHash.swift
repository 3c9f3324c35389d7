import Foundation

/// A 64-bit hash fed in pieces (FNV-1a over 8-byte little-endian words, the last partial word
/// zero-padded, then the length mixed in): cheap enough for 64 MiB in a debug build, and the same
/// whatever the piece boundaries are.
struct StreamHash: Sendable {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325
    private(set) var count = 0
    private var pending: UInt64 = 0
    private var pendingCount = 0

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        var index = 0
        let total = bytes.count
        while pendingCount != 0, index < total {
            pending |= UInt64(base.load(fromByteOffset: index, as: UInt8.self)) << (8 * UInt64(pendingCount))
            pendingCount += 1
            index += 1
            if pendingCount == 8 { mix(pending); pending = 0; pendingCount = 0 }
        }
        while total - index >= 8 {
            mix(UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self)))
            index += 8
        }
        while index < total {
            pending |= UInt64(base.load(fromByteOffset: index, as: UInt8.self)) << (8 * UInt64(pendingCount))
            pendingCount += 1
            index += 1
        }
        count += total
    }

    mutating func update(_ data: Data) { data.withUnsafeBytes { update($0) } }

    private mutating func mix(_ word: UInt64) {
        value = (value ^ word) &* 0x0000_0100_0000_01b3
    }

    /// The hash of everything fed so far.
    var finalValue: UInt64 {
        var copy = self
        if copy.pendingCount > 0 { copy.mix(copy.pending) }
        copy.mix(UInt64(count))
        return copy.value
    }

    static func of(_ data: Data) -> UInt64 {
        var hash = StreamHash()
        hash.update(data)
        return hash.finalValue
    }
}
