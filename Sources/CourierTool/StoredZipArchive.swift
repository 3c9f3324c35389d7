import Foundation

/// Writes a zip archive whose entries are stored (not compressed): for each entry a local header and
/// the bytes, then the central directory and the end record (APPNOTE.TXT §4.3). It is all the
/// default run needs to give the zip plugin an archive, without a zip library or the `zip` program.
struct StoredZipArchive {
    private var body = Data()
    private var central = Data()
    private var count = 0

    /// Adds a file entry (`path` without a leading `/`), or a directory entry when `path` ends in `/`.
    mutating func add(_ path: String, _ contents: Data = Data()) {
        let name = Data(path.utf8)
        let crc = Self.crc32(contents)
        let offset = UInt32(body.count)
        let size = UInt32(contents.count)

        var local = Data()
        local.appendLE32(0x0403_4B50)   // local file header signature
        local.appendLE16(10)            // version needed to extract: 1.0
        local.appendLE16(0x0800)        // flags: names are UTF-8
        local.appendLE16(0)             // method: stored
        local.appendLE16(0)             // time 00:00
        local.appendLE16(0x21)          // date 1980-01-01
        local.appendLE32(crc)
        local.appendLE32(size)          // compressed size
        local.appendLE32(size)          // uncompressed size
        local.appendLE16(UInt16(name.count))
        local.appendLE16(0)             // extra field length
        body.append(local)
        body.append(name)
        body.append(contents)

        let isDirectory = path.hasSuffix("/")
        var entry = Data()
        entry.appendLE32(0x0201_4B50)   // central directory header signature
        entry.appendLE16(0x031E)        // made by: Unix, 3.0
        entry.appendLE16(10)
        entry.appendLE16(0x0800)
        entry.appendLE16(0)
        entry.appendLE16(0)
        entry.appendLE16(0x21)
        entry.appendLE32(crc)
        entry.appendLE32(size)
        entry.appendLE32(size)
        entry.appendLE16(UInt16(name.count))
        entry.appendLE16(0)             // extra field length
        entry.appendLE16(0)             // comment length
        entry.appendLE16(0)             // disk number
        entry.appendLE16(0)             // internal attributes
        entry.appendLE32((isDirectory ? 0o040755 : 0o100644) << 16 | (isDirectory ? 0x10 : 0))
        entry.appendLE32(offset)
        entry.append(name)
        central.append(entry)
        count += 1
    }

    /// The archive's bytes.
    var data: Data {
        var result = body
        let start = UInt32(result.count)
        result.append(central)
        result.appendLE32(0x0605_4B50)  // end of central directory signature
        result.appendLE16(0)            // this disk
        result.appendLE16(0)            // disk with the central directory
        result.appendLE16(UInt16(count))
        result.appendLE16(UInt16(count))
        result.appendLE32(UInt32(central.count))
        result.appendLE32(start)
        result.appendLE16(0)            // comment length
        return result
    }

    /// CRC-32 (ISO 3309, the polynomial zip uses) of `data`.
    static func crc32(_ data: Data) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
        }
        return crc ^ 0xFFFF_FFFF
    }

    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 != 0 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }
}

private extension Data {
    mutating func appendLE16(_ value: UInt16) {
        append(UInt8(value & 0xFF))
        append(UInt8(value >> 8))
    }

    mutating func appendLE32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { append(UInt8((value >> UInt32(shift)) & 0xFF)) }
    }
}
