import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One file of a persistent store (cookies, credentials, the URL cache's entries), read and
/// written safely.
///
/// - Reading opens the file without following a symbolic link and checks what was opened (not
///   the path), so the checks and the read see the same file. A store file that is not a regular
///   file, or larger than `sizeLimit`, is reported as unreadable.
/// - A symbolic link is refused, and so, with `ownerOnly`, is a file not owned by the effective
///   user or readable or writable by its group or others; a refused file is not read.
/// - Writing prepares the directory (``PrivateDirectory``: mode 0700, tightened to 0700 when it
///   exists, belongs to the user and is looser; with `strictDirectory`, a directory that is a
///   symbolic link or another user's is refused), writes a temporary file created with mode 0600
///   in the same directory, flushes it to disk (when asked to be durable) and renames it over the
///   target: readers see the old file or the new one, never half of one.
struct StoreFile: Sendable {

    /// What `read()` found.
    enum ReadResult: Equatable, Sendable {
        /// There is no file: the store starts empty.
        case missing
        /// The file's bytes.
        case contents(Data)
        /// The file exists but may not be trusted (a symbolic link, or `ownerOnly` checks
        /// failed); it was not read.
        case refused
        /// The file exists but could not be read: not a regular file, too large, or an I/O error.
        case unreadable
    }

    /// The largest store file read by default (bigger ones are treated as damaged).
    static let maximumSize = 16 * 1024 * 1024

    /// The file.
    let url: URL

    /// Whether the file must belong to the user and be private to them to be read.
    let ownerOnly: Bool

    /// The largest file read; a bigger one is reported as unreadable without being read.
    var sizeLimit = StoreFile.maximumSize

    /// Whether writing refuses a directory that is a symbolic link or belongs to another user
    /// (see ``PrivateDirectory/prepare(_:strict:)``).
    var strictDirectory = false

    /// Whether reading follows a symbolic link (a file the user links to, as OpenSSH follows a
    /// linked known_hosts file); the other checks still apply to what is opened.
    var followsSymbolicLinks = false

    /// Reads the whole file, applying the checks described on the type.
    func read() -> ReadResult {
        // O_NONBLOCK: a FIFO in the file's place opens at once (and is refused as no regular file).
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (followsSymbolicLinks ? 0 : O_NOFOLLOW))
        guard descriptor >= 0 else {
            switch errno {
            case ENOENT: return .missing
            case ELOOP: return .refused // a symbolic link: whatever it points to is not trusted
            default: return .unreadable
            }
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return .unreadable }
        guard info.st_mode & Self.fileTypeMask == Self.regularFileType else { return .unreadable }
        if ownerOnly, info.st_uid != geteuid() || info.st_mode & 0o077 != 0 { return .refused }
        guard info.st_size <= sizeLimit else { return .unreadable }

        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { readBytes(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                return .unreadable
            }
            data.append(contentsOf: buffer[0..<count])
            guard data.count <= sizeLimit else { return .unreadable }
        }
        return .contents(data)
    }

    /// Replaces the file's contents atomically; returns whether it worked.
    ///
    /// - Parameters:
    ///   - data: The new contents.
    ///   - durably: Whether the file and the rename are flushed to disk before returning (a cache
    ///     entry, which may be lost, skips that cost).
    @discardableResult
    func write(_ data: Data, durably: Bool = true) -> Bool {
        let directory = url.deletingLastPathComponent()
        guard PrivateDirectory.prepare(directory, strict: strictDirectory) else { return false }
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return false }
        // The umask can only remove permission bits, but say exactly what the file gets.
        var written = fchmod(descriptor, 0o600) == 0 && Self.writeAll(data, to: descriptor)
        written = written && (!durably || fsync(descriptor) == 0)
        close(descriptor)
        guard written, rename(temporary.path, url.path) == 0 else {
            unlink(temporary.path)
            return false
        }
        if durably { Self.syncDirectory(directory) }
        return true
    }

    /// Deletes the file, if there is one (a symbolic link is removed, never what it points to).
    func remove() {
        unlink(url.path)
    }

    // MARK: - Helpers

    static let fileTypeMask: mode_t = 0o170000
    private static let regularFileType: mode_t = 0o100000

    /// Writes every byte of `data` to `descriptor`, retrying short and interrupted writes.
    private static func writeAll(_ data: Data, to descriptor: Int32) -> Bool {
        data.withUnsafeBytes { bytes -> Bool in
            guard let base = bytes.baseAddress else { return true }
            var offset = 0
            while offset < bytes.count {
                let count = writeBytes(descriptor, base + offset, bytes.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += count
            }
            return true
        }
    }

    /// Flushes a directory's entries (the rename) to disk; failures are harmless and ignored.
    private static func syncDirectory(_ directory: URL) {
        let descriptor = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }
}

// The C calls under names `StoreFile`'s own `read()` and `write(_:)` do not shadow.

/// `read(2)`.
private func readBytes(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

/// `write(2)`.
private func writeBytes(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}
