import Foundation

/// An archive's central directory read the way ZIPFoundation 0.9.20 reads it, to refuse an archive
/// whose numbers would make ZIPFoundation trap (and take the host process with it) before it is
/// given to ZIPFoundation, and to find where an entry's data lies.
///
/// ZIPFoundation converts offsets to `off_t` and sizes to `Int64` without checking, and adds them in
/// `UInt64` without overflow checks: a ZIP64 offset or size of 2^63 or more, or one near 2^64, traps.
/// Its deflate loop also never ends on a stream that stops at the end of the file. So every entry's
/// local header offset and data must lie inside the file (which keeps every sum far below 2^63), its
/// uncompressed size must fit `Int64`, and its data is read by ``ZipEntryReader``, not ZIPFoundation.
/// The walk follows ZIPFoundation's: the last end record in the file, the ZIP64 end record right before
/// it, then one record after another until the count or the first record or local header that does
/// not parse, so the n-th record here is ZIPFoundation's n-th `Entry`.
struct ZipCentralDirectory {
    /// More entries than this (a million) are refused, so a listing stays a sane size.
    static let maximumEntries = 1_000_000

    /// Why an archive is refused.
    struct Refusal: Error {
        let reason: String
    }

    /// Where one entry's data lies and what it claims.
    struct Record {
        var compressionMethod: UInt64
        var compressedSize: UInt64
        var uncompressedSize: UInt64
        var crc32: UInt64
        /// The offset of the first data byte (after the local header, name and extra field).
        var dataOffset: UInt64
    }

    private let reader: ZipFileReader
    private let entryCount: UInt64
    private let start: UInt64

    /// Reads the end records of the archive `reader` reads.
    /// - Throws: ``Refusal`` when there is none or the central directory lies outside the file.
    init(_ reader: ZipFileReader) throws(Refusal) {
        self.reader = reader
        guard let end = Self.endRecordOffset(in: reader), let record = reader.bytes(at: end, count: 22) else {
            throw Refusal(reason: "it has no end of central directory record")
        }
        var count = record.uint16(at: 10)
        var start = record.uint32(at: 16)
        if end > 20, let locator = reader.bytes(at: end - 20, count: 20), locator.uint32(at: 0) == 0x0706_4B50,
           end - 20 > 56, let zip64 = reader.bytes(at: end - 76, count: 56), zip64.uint32(at: 0) == 0x0606_4B50,
           zip64.uint16(at: 14) >= 45 {
            count = zip64.uint64(at: 32)
            start = zip64.uint64(at: 48)
        }
        guard start <= reader.size else { throw Refusal(reason: "its central directory starts past the end of the file") }
        entryCount = count
        self.start = start
    }

    /// Checks every record (see the type's description).
    func check() throws(Refusal) {
        try walk { _, _ in true }
    }

    /// The record of the entry at `index` in ZIPFoundation's order.
    func record(at index: Int) throws(Refusal) -> Record? {
        try records(at: [index])[index]
    }

    /// The records of the entries at `indices` in ZIPFoundation's order, in one walk.
    func records(at indices: Set<Int>) throws(Refusal) -> [Int: Record] {
        guard let last = indices.max() else { return [:] }
        var found: [Int: Record] = [:]
        try walk { current, record in
            if indices.contains(current) { found[current] = record }
            return current < last
        }
        return found
    }

    /// Visits the records in order while `visit` returns true.
    private func walk(_ visit: (Int, Record) -> Bool) throws(Refusal) {
        var position = start
        var index = 0
        while UInt64(index) < entryCount {
            guard index < Self.maximumEntries else { throw Refusal(reason: "it has more than \(Self.maximumEntries) entries") }
            guard let fixed = reader.bytes(at: position, count: 46), fixed.uint32(at: 0) == 0x0201_4B50 else { return }
            let nameLength = Int(fixed.uint16(at: 28)), extraLength = Int(fixed.uint16(at: 30))
            let commentLength = Int(fixed.uint16(at: 32))
            guard let variable = reader.bytes(at: position + 46, count: nameLength + extraLength + commentLength) else { return }
            let extra = Array(variable[nameLength..<(nameLength + extraLength)])
            guard let record = try record(fixed: fixed, extra: extra, index: index) else { return }
            guard visit(index, record) else { return }
            position += 46 + UInt64(variable.count)
            index += 1
        }
    }

    /// The record described by a central directory record, or nil where ZIPFoundation stops (the
    /// local header does not parse, or the entry is encrypted).
    private func record(fixed: [UInt8], extra: [UInt8], index: Int) throws(Refusal) -> Record? {
        let version = fixed.uint16(at: 6), flags = fixed.uint16(at: 8)
        let compressed32 = fixed.uint32(at: 20), uncompressed32 = fixed.uint32(at: 24)
        let offset32 = fixed.uint32(at: 42), disk16 = fixed.uint16(at: 34)
        let zip64 = Self.zip64Values(in: extra, uncompressed: uncompressed32 == 0xFFFF_FFFF, compressed: compressed32 == 0xFFFF_FFFF,
                                     offset: offset32 == 0xFFFF_FFFF, disk: disk16 == 0xFFFF)
        let isZIP64 = version & 0xFF >= 45 || zip64 != nil
        func effective(_ value: UInt64?, _ fallback: UInt64) -> UInt64 {
            if isZIP64, let value, value > 0 { return value }
            return fallback
        }
        let compressed = effective(zip64?.compressed, compressed32)
        let uncompressed = effective(zip64?.uncompressed, uncompressed32)
        let offset = effective(zip64?.offset, offset32)
        let size = reader.size
        guard offset <= size else { throw Refusal(reason: "entry \(index) starts past the end of the file") }
        guard let local = reader.bytes(at: offset, count: 30), local.uint32(at: 0) == 0x0403_4B50 else { return nil }
        guard flags & 1 == 0 else { return nil }
        let dataOffset = offset + 30 + local.uint16(at: 26) + local.uint16(at: 28)
        let method = fixed.uint16(at: 10)
        let stored = method == 0
        guard dataOffset <= size, compressed <= size - dataOffset, !stored || uncompressed <= size - dataOffset else {
            throw Refusal(reason: "the data of entry \(index) runs past the end of the file")
        }
        guard uncompressed <= UInt64(Int64.max) else { throw Refusal(reason: "entry \(index) claims an impossible size") }
        return Record(compressionMethod: method, compressedSize: compressed, uncompressedSize: uncompressed,
                      crc32: fixed.uint32(at: 16), dataOffset: dataOffset)
    }

    /// The values of a ZIP64 extended information field as ZIPFoundation reads them: the field's size
    /// must be exactly that of the values whose 32-bit counterparts are all ones.
    private static func zip64Values(in extra: [UInt8], uncompressed: Bool, compressed: Bool, offset: Bool, disk: Bool)
        -> (uncompressed: UInt64, compressed: UInt64, offset: UInt64)? {
        var position = 0
        while position < extra.count - 4 {
            let id = extra.uint16(at: position), length = Int(extra.uint16(at: position + 2))
            let next = position + 4 + length
            guard next <= extra.count else { return nil }
            if id == 0x0001 {
                let expected = (uncompressed ? 8 : 0) + (compressed ? 8 : 0) + (offset ? 8 : 0) + (disk ? 4 : 0)
                guard length == expected else { return nil }
                var cursor = position + 4
                func take(_ present: Bool) -> UInt64 {
                    guard present else { return 0 }
                    defer { cursor += 8 }
                    return extra.uint64(at: cursor)
                }
                return (take(uncompressed), take(compressed), take(offset))
            }
            position = next
        }
        return nil
    }

    /// The offset of the last end of central directory signature at least 22 bytes before the end
    /// (ZIPFoundation scans the whole file backwards, byte by byte).
    private static func endRecordOffset(in reader: ZipFileReader) -> UInt64? {
        guard reader.size >= 22 else { return nil }
        let block: UInt64 = 64 << 10
        var blockEnd = reader.size - 18 // the signature at size - 22 ends at size - 18
        while blockEnd >= 4 {
            let blockStart = blockEnd > block ? blockEnd - block : 0
            guard let bytes = reader.bytes(at: blockStart, count: Int(blockEnd - blockStart)) else { return nil }
            var index = bytes.count - 4
            while index >= 0 {
                if bytes[index] == 0x50, bytes[index + 1] == 0x4B, bytes[index + 2] == 0x05, bytes[index + 3] == 0x06 {
                    return blockStart + UInt64(index)
                }
                index -= 1
            }
            guard blockStart > 0 else { return nil }
            blockEnd = blockStart + 3 // overlap by three bytes so a signature across blocks is found
        }
        return nil
    }
}
