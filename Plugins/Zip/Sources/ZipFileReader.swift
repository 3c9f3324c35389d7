import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Reads byte ranges of an archive file with `pread`, never past its end and never at an offset
/// that does not fit `off_t`, and decodes the little-endian numbers of the zip format.
final class ZipFileReader {
    /// The file's size when it was opened.
    let size: UInt64
    private let descriptor: Int32

    /// Opens `path` for reading; nil when it cannot be opened or sized.
    init?(path: String) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_size >= 0 else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
        size = UInt64(status.st_size)
    }

    deinit { close(descriptor) }

    /// `count` bytes at `offset`, or nil when the file has fewer there.
    func bytes(at offset: UInt64, count: Int) -> [UInt8]? {
        guard count >= 0, offset <= size, UInt64(count) <= size - offset,
              let start = off_t(exactly: offset) else { return nil }
        var buffer = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let read = buffer.withUnsafeMutableBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return pread(descriptor, base + done, count - done, start + off_t(done))
            }
            if read < 0 && errno == EINTR { continue }
            guard read > 0 else { return nil }
            done += read
        }
        return buffer
    }
}

extension Array where Element == UInt8 {
    /// The little-endian unsigned number of `width` bytes at `offset` (0 past the end).
    func littleEndian(at offset: Int, width: Int) -> UInt64 {
        guard offset >= 0, width <= 8, offset <= count - width else { return 0 }
        var value: UInt64 = 0
        for index in (0..<width).reversed() { value = value << 8 | UInt64(self[offset + index]) }
        return value
    }

    func uint16(at offset: Int) -> UInt64 { littleEndian(at: offset, width: 2) }
    func uint32(at offset: Int) -> UInt64 { littleEndian(at: offset, width: 4) }
    func uint64(at offset: Int) -> UInt64 { littleEndian(at: offset, width: 8) }
}
