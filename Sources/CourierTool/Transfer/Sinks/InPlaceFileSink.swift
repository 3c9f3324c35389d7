import Courier
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes the body into `path` itself as it arrives, and removes nothing when the load fails. Two
/// targets are written this way:
///
/// - a resumed download (`-C`, ``init(resuming:at:)``): the file is created if missing, cut to the
///   offset, and the body is appended, so the part written can be resumed again;
/// - an existing file that is not a regular file (``init(special:)``) — a device such as
///   `/dev/null`, a named pipe, `/dev/stdout` — as curl does. Such a target can be neither replaced
///   by a rename (that would put a regular file where `/dev/null` was) nor cut to an offset.
final class InPlaceFileSink: OutputSink {
    /// The file the body goes into.
    let path: String
    private let handle: OpenOutputFile

    /// Whether `path` exists and is neither a regular file nor a directory (following links).
    static func isSpecialFile(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        let type = info.st_mode & S_IFMT
        return type != S_IFREG && type != S_IFDIR
    }

    /// Opens (or creates) `path` and cuts it to `offset` bytes.
    /// - Throws: ``OutputError`` when the file cannot be opened or cut.
    init(resuming path: String, at offset: Int64) throws {
        self.path = path
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o666)
        if fd < 0 { throw OutputError(operation: .create, path: path, errno: errno) }
        if ftruncate(fd, off_t(offset)) != 0 || lseek(fd, 0, SEEK_END) < 0 {
            let code = errno
            close(fd)
            throw OutputError(operation: .write, path: path, errno: code)
        }
        handle = OpenOutputFile(fd)
    }

    /// Opens the special file `path` for writing, without creating or truncating it.
    /// - Throws: ``OutputError`` when it cannot be opened.
    init(special path: String) throws {
        self.path = path
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        if fd < 0 { throw OutputError(operation: .create, path: path, errno: errno) }
        handle = OpenOutputFile(fd)
    }

    func write(_ data: Data) throws {
        try handle.write(data, path: path)
    }

    func finish() throws {
        try handle.close(path: path)
    }

    func abort() { _ = try? handle.close(path: path) }
}
