import Foundation
import ZIPFoundation

/// Reads one entry's data from the archive file, within the bounds its central directory record
/// gives (``ZipCentralDirectory/Record``): stored data is read as is, deflated data is inflated by
/// ZIPFoundation's `Data.decompress` fed by this reader. Reading never goes past the entry's
/// compressed bytes, so a stream that does not end is an error rather than an endless loop, and
/// inflating never produces more than the entry's declared size (a zip bomb stops there).
struct ZipEntryReader {
    /// Why reading failed.
    enum Failure: Error {
        /// The data ends before the entry does.
        case truncated
        /// The data inflates to more than the declared size.
        case tooLarge
        /// The data inflates to less than the declared size.
        case tooSmall
        /// The data is not what its CRC-32 says.
        case checksumMismatch
        /// The compression method is neither stored nor deflate.
        case unsupportedMethod
    }

    let reader: ZipFileReader
    let record: ZipCentralDirectory.Record

    /// Reads the entry in chunks of at most `chunkSize` bytes, passing each to `consumer`.
    func read(chunkSize: Int, consumer: (Data) throws -> Void) throws {
        var produced: UInt64 = 0
        var checksum: CRC32 = 0
        let deliver: (Data) throws -> Void = { chunk in
            guard !chunk.isEmpty else { return }
            guard UInt64(chunk.count) <= record.uncompressedSize - produced else { throw Failure.tooLarge }
            produced += UInt64(chunk.count)
            checksum = chunk.crc32(checksum: checksum)
            try consumer(chunk)
        }
        switch record.compressionMethod {
        case 0:
            try readRaw(limit: record.uncompressedSize, chunkSize: chunkSize, into: deliver)
        case 8:
            var consumed: UInt64 = 0
            _ = try Data.decompress(size: Int64(clamping: record.compressedSize), bufferSize: chunkSize, skipCRC32: true,
                                    provider: { _, wanted in
                                        let wanted = Swift.max(wanted, 0)
                                        let count = Swift.min(UInt64(wanted), record.compressedSize - consumed)
                                        guard count > 0, let bytes = reader.bytes(at: record.dataOffset + consumed, count: Int(count))
                                        else { throw Failure.truncated }
                                        consumed += count
                                        // ZIPFoundation tells zlib a chunk holds `wanted` bytes whatever its length:
                                        // pad it. A stream that ended never reads the padding; one that did not
                                        // fails on it, or at the next call.
                                        var chunk = Data(bytes)
                                        if chunk.count < wanted { chunk.append(Data(count: wanted - chunk.count)) }
                                        return chunk
                                    }, consumer: deliver)
        default:
            throw Failure.unsupportedMethod
        }
        guard produced == record.uncompressedSize else { throw Failure.tooSmall }
        guard UInt64(checksum) == record.crc32 else { throw Failure.checksumMismatch }
    }

    /// Reads `limit` bytes from the entry's data offset, as they are.
    private func readRaw(limit: UInt64, chunkSize: Int, into deliver: (Data) throws -> Void) throws {
        var done: UInt64 = 0
        while done < limit {
            let count = Int(Swift.min(UInt64(chunkSize), limit - done))
            guard let bytes = reader.bytes(at: record.dataOffset + done, count: count) else { throw Failure.truncated }
            try deliver(Data(bytes))
            done += UInt64(count)
        }
    }
}
