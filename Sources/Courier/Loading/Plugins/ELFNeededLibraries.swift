import Foundation

/// Reads the names of the shared libraries an ELF file depends on (its `DT_NEEDED` entries)
/// without loading it, as `readelf -d` shows them.
///
/// Only 64-bit little-endian ELF files are read (every Linux target Courier builds for). The file
/// is mapped, not read into memory, and every offset is checked against its size: a truncated or
/// malformed file throws ``Malformed`` and never reads out of bounds.
enum ELFNeededLibraries {
    /// The file is not a 64-bit little-endian ELF file, or its headers point outside it.
    struct Malformed: Error, Equatable {
        /// What was wrong.
        var reason: String
    }

    private static let programHeaderLoad: UInt32 = 1
    private static let programHeaderDynamic: UInt32 = 2
    private static let dynamicNull: UInt64 = 0
    private static let dynamicNeeded: UInt64 = 1
    private static let dynamicStringTable: UInt64 = 5
    private static let dynamicStringTableSize: UInt64 = 10

    /// The `DT_NEEDED` names of the ELF file at `url`, in the file's order.
    static func read(_ url: URL) throws -> [String] {
        try parse(Data(contentsOf: url, options: .alwaysMapped))
    }

    /// The `DT_NEEDED` names of the ELF image `bytes`.
    static func parse(_ bytes: Data) throws -> [String] {
        let file = Reader(bytes: bytes)
        guard bytes.count >= 64, bytes.prefix(4).elementsEqual([0x7F, 0x45, 0x4C, 0x46]) else {
            throw Malformed(reason: "not an ELF file")
        }
        guard try file.byte(4) == 2, try file.byte(5) == 1 else {
            throw Malformed(reason: "not a 64-bit little-endian ELF file")
        }
        let headersOffset = try file.uint64(32)
        let headerSize = UInt64(try file.uint16(54))
        let headerCount = UInt64(try file.uint16(56))
        guard headerSize >= 56 else { throw Malformed(reason: "program headers too small") }

        var loads: [(address: UInt64, offset: UInt64, size: UInt64)] = []
        var dynamic: (offset: UInt64, size: UInt64)?
        for index in 0..<headerCount {
            let (base, overflow) = headersOffset.addingReportingOverflow(index * headerSize)
            guard !overflow else { throw Malformed(reason: "program header offset overflows") }
            switch try file.uint32(base) {
            case programHeaderLoad:
                loads.append((try file.uint64(base + 16), try file.uint64(base + 8), try file.uint64(base + 32)))
            case programHeaderDynamic:
                dynamic = (try file.uint64(base + 8), try file.uint64(base + 32))
            default:
                break
            }
        }
        guard let dynamic else { return [] }

        var neededOffsets: [UInt64] = []
        var stringTableAddress: UInt64?
        var stringTableSize: UInt64 = 0
        var entry = dynamic.offset
        while entry + 16 <= dynamic.offset + dynamic.size {
            let tag = try file.uint64(entry)
            let value = try file.uint64(entry + 8)
            if tag == dynamicNull { break }
            switch tag {
            case dynamicNeeded: neededOffsets.append(value)
            case dynamicStringTable: stringTableAddress = value
            case dynamicStringTableSize: stringTableSize = value
            default: break
            }
            entry += 16
        }
        guard let stringTableAddress else {
            if neededOffsets.isEmpty { return [] }
            throw Malformed(reason: "DT_NEEDED without a string table")
        }
        // The string table is named by its address once loaded; find where that is in the file.
        guard let load = loads.first(where: { stringTableAddress >= $0.address && stringTableAddress - $0.address < $0.size }) else {
            throw Malformed(reason: "the string table lies outside every loaded segment")
        }
        let tableOffset = stringTableAddress - load.address + load.offset
        return try neededOffsets.map { offset in
            guard offset < stringTableSize else { throw Malformed(reason: "a DT_NEEDED name lies outside the string table") }
            return try file.cString(at: tableOffset + offset, limit: tableOffset + stringTableSize)
        }
    }

    /// Bounds-checked little-endian reads from the file's bytes.
    private struct Reader {
        var bytes: Data

        func byte(_ offset: UInt64) throws -> UInt8 {
            guard offset < UInt64(bytes.count) else { throw Malformed(reason: "offset \(offset) is past the end of the file") }
            return bytes[bytes.startIndex + Int(offset)]
        }

        func uint16(_ offset: UInt64) throws -> UInt16 { UInt16(try integer(offset, width: 2)) }
        func uint32(_ offset: UInt64) throws -> UInt32 { UInt32(try integer(offset, width: 4)) }
        func uint64(_ offset: UInt64) throws -> UInt64 { try integer(offset, width: 8) }

        private func integer(_ offset: UInt64, width: UInt64) throws -> UInt64 {
            let (end, overflow) = offset.addingReportingOverflow(width)
            guard !overflow, end <= UInt64(bytes.count) else {
                throw Malformed(reason: "offset \(offset) is past the end of the file")
            }
            var value: UInt64 = 0
            for index in (0..<width).reversed() {
                value = value << 8 | UInt64(bytes[bytes.startIndex + Int(offset + index)])
            }
            return value
        }

        /// The NUL-terminated string at `offset`, which must end before `limit`.
        func cString(at offset: UInt64, limit: UInt64) throws -> String {
            var end = offset
            while try byte(end) != 0 {
                end += 1
                guard end < limit else { throw Malformed(reason: "an unterminated name in the string table") }
            }
            let start = bytes.startIndex + Int(offset)
            return String(decoding: bytes[start..<(bytes.startIndex + Int(end))], as: UTF8.self)
        }
    }
}
