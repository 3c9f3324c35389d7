import Courier
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a response body goes, chunk by chunk, as the chunks arrive: nothing here holds a whole body.
///
/// A fetch calls ``write(_:)`` for each chunk, then exactly one of ``finish()`` (the load succeeded) or
/// ``abort()`` (it failed). Calls come from the session's delegate queue, one at a time.
protocol OutputSink: Sendable {
    /// Appends `data` to the output.
    func write(_ data: Data) throws
    /// Makes the output final (for a file: moves it into place).
    func finish() throws
    /// Drops the output (for a file: removes the partial copy; the target is left as it was).
    func abort()
}

/// Writes to standard output, unbuffered.
struct StandardOutputSink: OutputSink {
    func write(_ data: Data) throws { try Console.writeOut(data) }
    func finish() throws {}
    func abort() {}
}

/// Counts bytes and drops them, keeping only the first few (the embedded default run measures bodies
/// and compares short ones).
final class CountingSink: OutputSink {
    private struct State {
        var count: Int64 = 0
        var sample = Data()
    }

    private let state = Locked(State())
    /// How many bytes of the start of the body ``sample`` keeps.
    let keeping: Int

    init(keeping: Int = 0) {
        self.keeping = keeping
    }

    /// The number of bytes written so far.
    var bytes: Int64 { state.withLock { $0.count } }

    /// The first ``keeping`` bytes written.
    var sample: Data { state.withLock { $0.sample } }

    func write(_ data: Data) throws {
        state.withLock { state in
            state.count += Int64(data.count)
            let room = keeping - state.sample.count
            if room > 0 { state.sample.append(data.prefix(room)) }
        }
    }

    func finish() throws {}
    func abort() {}
}

/// Writes to a temporary file beside `path` and renames it over `path` only when the load succeeds, so a
/// failed or interrupted load never leaves a half-written target behind.
final class AtomicFileSink: OutputSink {
    /// The file the body ends up in.
    let path: String
    private let temporaryPath: String
    private let handle: OpenOutputFile

    /// Creates the temporary file (`.NAME.courier-XXXXXX` in the target's directory).
    /// - Throws: ``OutputError`` when the directory is missing or not writable.
    init(path: String) throws {
        self.path = path
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        var template = Array((directory + "/." + url.lastPathComponent + ".courier-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -1 }
            return mkstemp(base)
        }
        if fd < 0 {
            throw OutputError(operation: .create, path: path, errno: errno)
        }
        // mkstemp creates the file 0600; give the result the usual permissions (0666 less the umask).
        let mask = umask(0)
        umask(mask)
        _ = fchmod(fd, 0o666 & ~mask)
        self.temporaryPath = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        self.handle = OpenOutputFile(fd)
    }

    func write(_ data: Data) throws {
        try handle.write(data, path: path)
    }

    func finish() throws {
        let closing = handle.take()
        guard let closing else { return }
        do {
            try closing.close()
        } catch {
            unlink(temporaryPath)
            throw OutputError(operation: .write, path: path, underlying: error)
        }
        if rename(temporaryPath, path) != 0 {
            let code = errno
            unlink(temporaryPath)
            throw OutputError(operation: .rename, path: path, errno: code)
        }
    }

    func abort() {
        let closing = handle.take()
        guard let closing else { return }
        try? closing.close()
        unlink(temporaryPath)
    }

    deinit { abort() }
}

/// Writes into `path` in place from `offset` on (`-C`): the file is created if missing and cut to
/// `offset`, and the body is appended. Nothing is removed when the load fails, so the part written
/// can be resumed again.
final class AppendingFileSink: OutputSink {
    /// The file the body goes into.
    let path: String
    private let handle: OpenOutputFile

    /// Opens (or creates) `path` and cuts it to `offset` bytes.
    /// - Throws: ``OutputError`` when the file cannot be opened or cut.
    init(path: String, offset: Int64) throws {
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

    func write(_ data: Data) throws {
        try handle.write(data, path: path)
    }

    func finish() throws {
        let closing = handle.take()
        do {
            try closing?.close()
        } catch {
            throw OutputError(operation: .write, path: path, underlying: error)
        }
    }

    func abort() { try? finish() }
}

/// A failure to create, write or move an output file. It is reported in the tool's usual format with
/// the matching `URLError` code name (`cannotCreateFile`, `cannotWriteToFile`, `cannotMoveFile`).
struct OutputError: Error, CustomStringConvertible {
    enum Operation: Sendable { case create, write, rename }

    let operation: Operation
    let path: String
    let errnoValue: Int32?
    let underlying: String?

    init(operation: Operation, path: String, errno: Int32) {
        self.operation = operation
        self.path = path
        self.errnoValue = errno
        self.underlying = nil
    }

    init(operation: Operation, path: String, underlying: any Error) {
        self.operation = operation
        self.path = path
        let nsError = underlying as NSError
        self.errnoValue = nsError.domain == NSPOSIXErrorDomain ? Int32(nsError.code) : nil
        self.underlying = nsError.localizedDescription
    }

    /// The `URLError` equivalent, for the code name and exit status.
    var urlError: URLError {
        let code: URLError.Code = switch operation {
        case .create: .cannotCreateFile
        case .write: .cannotWriteToFile
        case .rename: .cannotMoveFile
        }
        return URLError(code, userInfo: [NSLocalizedDescriptionKey: description])
    }

    /// The exit status: permission problems and missing directories get their own.
    var exit: ToolExit {
        switch errnoValue {
        case EACCES, EPERM, EROFS: .permissionDenied
        case ENOENT, ENOTDIR: .notFound
        default: .other
        }
    }

    var description: String {
        let verb = switch operation {
        case .create: "cannot create output file"
        case .write: "cannot write output file"
        case .rename: "cannot move output into place at"
        }
        let reason = errnoValue.map { String(cString: strerror($0)) } ?? underlying ?? "unknown error"
        return "\(verb) \(path): \(reason)"
    }
}

/// Writes straight into an existing file that is not a regular file — a device such as `/dev/null`,
/// a named pipe, `/dev/stdout` — as curl does. Such a target can be neither replaced by a rename
/// (that would put a regular file where `/dev/null` was) nor cut to an offset, so the body is
/// written through it as it arrives and nothing is removed on failure.
final class SpecialFileSink: OutputSink {
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

    /// Opens `path` for writing, without creating or truncating it.
    /// - Throws: ``OutputError`` when it cannot be opened.
    init(path: String) throws {
        self.path = path
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        if fd < 0 { throw OutputError(operation: .create, path: path, errno: errno) }
        handle = OpenOutputFile(fd)
    }

    func write(_ data: Data) throws {
        try handle.write(data, path: path)
    }

    func finish() throws {
        do {
            try handle.take()?.close()
        } catch {
            throw OutputError(operation: .write, path: path, underlying: error)
        }
    }

    func abort() { try? finish() }
}
