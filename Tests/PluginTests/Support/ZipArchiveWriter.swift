import Foundation

/// Writes zip archives with stored (uncompressed) entries, enough to test the zip plugin without
/// linking a zip library into the tests. `Fixtures/deflated.zip` covers compressed entries.
struct ZipArchiveWriter {
    private var body = Data()
    private var central = Data()
    private var count = 0

    /// Adds a file entry (`path` without a leading `/`), or a directory entry when `path` ends in `/`.
    ///
    /// By default the entry is made by Unix with mode 0100644 (0040755 for a directory) and dated
    /// 1980-01-01 00:00. `mode` replaces the Unix mode (0120777 makes a symbolic link whose target is
    /// `contents`); `system` is the "made by" host (3 Unix, 0 MS-DOS: no mode is written);
    /// `modified` is the DOS date and time.
    ///
    /// `central` replaces fields of the central directory record, to write hostile archives.
    mutating func add(_ path: String, _ contents: Data = Data(), mode: UInt32? = nil, system: UInt8 = 3,
                      modified: (date: UInt16, time: UInt16) = (0x21, 0), central: CentralFields = CentralFields()) {
        let name = central.name ?? Data(path.utf8)
        let crc = Self.crc32(contents)
        let offset = UInt32(body.count)
        var local = Data()
        local.append32(0x0403_4B50)
        local.append16(10)            // version needed
        local.append16(0x0800)        // flags: UTF-8 names
        local.append16(0)             // stored
        local.append16(modified.time); local.append16(modified.date)
        local.append32(crc)
        local.append32(UInt32(contents.count)); local.append32(UInt32(contents.count))
        local.append16(UInt16(name.count)); local.append16(0)
        body.append(local); body.append(name); body.append(contents)

        var entry = Data()
        entry.append32(0x0201_4B50)
        entry.append16(UInt16(system) << 8 | 0x1E)  // made by: system, 3.0
        entry.append16(central.versionNeeded ?? 10); entry.append16(central.flags ?? 0x0800); entry.append16(central.method ?? 0)
        entry.append16(modified.time); entry.append16(modified.date)
        entry.append32(crc)
        entry.append32(central.compressedSize ?? UInt32(contents.count)); entry.append32(central.uncompressedSize ?? UInt32(contents.count))
        entry.append16(UInt16(name.count)); entry.append16(UInt16(central.extra.count)); entry.append16(0)
        entry.append16(0); entry.append16(0)
        let isDirectory = path.hasSuffix("/")
        let unixMode: UInt32 = system == 3 ? mode ?? (isDirectory ? 0o040755 : 0o100644) : 0
        entry.append32(unixMode << 16 | (isDirectory ? 0x10 : 0))
        entry.append32(central.offset ?? offset)
        entry.append(name)
        entry.append(central.extra)
        self.central.append(entry)
        count += 1
    }

    /// The archive's bytes.
    var data: Data { data() }

    /// The archive's bytes, with the end record's entry count and directory offset replaced when
    /// given, and a ZIP64 end record and locator before it when `zip64End` is given.
    func data(entryCount: UInt16? = nil, directoryOffset: UInt32? = nil,
              zip64End: (count: UInt64, offset: UInt64)? = nil) -> Data {
        var result = body
        let start = UInt32(result.count)
        result.append(central)
        if let zip64End {
            let recordOffset = UInt64(result.count)
            result.append32(0x0606_4B50); result.append64(44)
            result.append16(45); result.append16(45); result.append32(0); result.append32(0)
            result.append64(zip64End.count); result.append64(zip64End.count)
            result.append64(UInt64(central.count)); result.append64(zip64End.offset)
            result.append32(0x0706_4B50); result.append32(0); result.append64(recordOffset); result.append32(1)
        }
        result.append32(0x0605_4B50)
        result.append16(0); result.append16(0)
        result.append16(entryCount ?? UInt16(count)); result.append16(entryCount ?? UInt16(count))
        result.append32(UInt32(central.count)); result.append32(directoryOffset ?? start)
        result.append16(0)
        return result
    }

    /// Fields of a central directory record to write instead of the true ones.
    struct CentralFields {
        var versionNeeded: UInt16?
        var flags: UInt16?
        var method: UInt16?
        var compressedSize: UInt32?
        var uncompressedSize: UInt32?
        var offset: UInt32?
        var name: Data?
        var extra = Data()

        /// A ZIP64 entry (version 45) whose extended information field gives these values; the
        /// 32-bit fields of the given ones are set to all ones.
        static func zip64(uncompressed: UInt64? = nil, compressed: UInt64? = nil, offset: UInt64? = nil) -> CentralFields {
            var fields = CentralFields(versionNeeded: 45)
            var values = Data()
            if let uncompressed { values.append64(uncompressed); fields.uncompressedSize = .max }
            if let compressed { values.append64(compressed); fields.compressedSize = .max }
            if let offset { values.append64(offset); fields.offset = .max }
            fields.extra.append16(0x0001); fields.extra.append16(UInt16(values.count)); fields.extra.append(values)
            return fields
        }
    }

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

extension Data {
    mutating func append16(_ value: UInt16) { append(UInt8(value & 0xFF)); append(UInt8(value >> 8)) }
    mutating func append32(_ value: UInt32) { for shift in stride(from: 0, to: 32, by: 8) { append(UInt8((value >> UInt32(shift)) & 0xFF)) } }
    mutating func append64(_ value: UInt64) { for shift in stride(from: 0, to: 64, by: 8) { append(UInt8((value >> UInt64(shift)) & 0xFF)) } }
}
