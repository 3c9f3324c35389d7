import Courier
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes to a temporary file beside `path` and renames it over `path` only when the load succeeds, so a
/// failed or interrupted load never leaves a half-written target behind.
///
/// The body either arrives chunk by chunk (``write(_:)``) or as a download task's finished file
/// (``adopt(downloadFile:)``, see ``DownloadFileSink``), which is renamed over the temporary file.
final class AtomicFileSink: DownloadFileSink {
    /// Where the temporary file is in its life.
    private enum Phase {
        /// Open: chunks are written into it.
        case writing
        /// A download file has been renamed over it; the descriptor is closed.
        case adopted
        /// Renamed into place, or removed.
        case ended
    }

    /// The file the body ends up in.
    let path: String
    private let temporaryPath: String
    private let handle: OpenOutputFile
    private let phase = Locked(Phase.writing)
    /// The permissions the result gets: 0666 less the umask, as a file the shell creates.
    private let permissions: mode_t

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
        permissions = 0o666 & ~mask
        _ = fchmod(fd, permissions)
        self.temporaryPath = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        self.handle = OpenOutputFile(fd)
    }

    func write(_ data: Data) throws {
        try handle.write(data, path: path)
    }

    var takesDownloadFile: Bool {
        guard handle.bytesWritten == 0, let device = handle.device else { return false }
        return device == Self.downloadDirectoryDevice
    }

    func adopt(downloadFile location: URL) throws {
        try phase.withLock { phase throws(OutputError) in
            guard phase == .writing else { throw OutputError(operation: .rename, path: path, errno: EBADF) }
            // The empty placeholder goes first: renaming over an existing file makes ext4 write the
            // whole download out before the rename returns (its replace-by-rename safeguard), which
            // costs a tenth of a fast download. A link cannot replace a file that appeared under the
            // name meanwhile; where links are not allowed, a rename does it.
            _ = try? handle.close(path: path)
            unlink(temporaryPath)
            if link(location.path, temporaryPath) == 0 {
                unlink(location.path)
            } else if errno == EEXIST || rename(location.path, temporaryPath) != 0 {
                let code = errno
                phase = .ended
                throw OutputError(operation: .rename, path: path, errno: code)
            }
            _ = chmod(temporaryPath, permissions)
            phase = .adopted
        }
    }

    func finish() throws {
        let previous = phase.withLock { phase -> Phase in
            defer { phase = .ended }
            return phase
        }
        switch previous {
        case .ended:
            return
        case .writing:
            do {
                try handle.close(path: path)
            } catch {
                unlink(temporaryPath)
                throw error
            }
        case .adopted:
            break
        }
        if rename(temporaryPath, path) != 0 {
            let code = errno
            unlink(temporaryPath)
            throw OutputError(operation: .rename, path: path, errno: code)
        }
    }

    func abort() {
        let previous = phase.withLock { phase -> Phase in
            defer { phase = .ended }
            return phase
        }
        guard previous != .ended else { return }
        _ = try? handle.close(path: path)
        unlink(temporaryPath)
    }

    deinit { abort() }

    /// The file system of the directory Courier's download tasks write their files into (the
    /// temporary directory, `TMPDIR`), or nil when it cannot be examined.
    private static let downloadDirectoryDevice: dev_t? = {
        var info = stat()
        guard stat(FileManager.default.temporaryDirectory.path, &info) == 0 else { return nil }
        return info.st_dev
    }()
}
