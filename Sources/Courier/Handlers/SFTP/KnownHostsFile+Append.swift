import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension KnownHostsFile {
    /// Why a line could not be added to a known-hosts file.
    struct AppendError: Error, Equatable {
        /// What went wrong, naming the file.
        var reason: String
    }

    /// Appends `line` (one entry, ending in a newline) to the known-hosts file at `url`, as
    /// `StrictHostKeyChecking=accept-new` does.
    ///
    /// A missing file is created with mode 0600, and a missing directory for it (`~/.ssh`) with mode
    /// 0700. The file is refused when it is a symbolic link (`O_NOFOLLOW`), not a regular file,
    /// owned by another user, writable by its group or others, or has other hard links — anyone
    /// who could write it could make Courier trust their key. The line is written with one `write`
    /// to a file opened `O_APPEND`, so concurrent writers (another Courier, `ssh`) never interleave
    /// inside it; a newline goes first when the file does not end with one (the file is opened for
    /// reading too, to see its last byte).
    static func append(_ line: String, to url: URL) throws(AppendError) {
        let path = url.path
        let directory = url.deletingLastPathComponent().path
        var info = stat()
        if stat(directory, &info) != 0 {
            guard errno == ENOENT, mkdir(directory, 0o700) == 0 || errno == EEXIST else {
                throw AppendError(reason: "The directory \(directory) could not be created (\(String(cString: strerror(errno)))).")
            }
        }
        let fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0o600)
        guard fd >= 0 else {
            let detail = errno == ELOOP ? "it is a symbolic link" : String(cString: strerror(errno))
            throw AppendError(reason: "The known-hosts file \(path) could not be opened for writing: \(detail).")
        }
        defer { close(fd) }
        guard fstat(fd, &info) == 0 else {
            throw AppendError(reason: "The known-hosts file \(path) could not be examined: \(String(cString: strerror(errno))).")
        }
        if let problem = unsafeFileProblem(info) {
            throw AppendError(reason: "The known-hosts file \(path) is not written: \(problem).")
        }
        var text = Data(line.utf8)
        if info.st_size > 0 {
            var last: UInt8 = 0
            if pread(fd, &last, 1, off_t(info.st_size - 1)) == 1, last != UInt8(ascii: "\n") {
                text.insert(UInt8(ascii: "\n"), at: 0)
            }
        }
        let written = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == text.count else {
            let detail = written < 0 ? String(cString: strerror(errno)) : "only \(written) of \(text.count) bytes were written"
            throw AppendError(reason: "The known-hosts file \(path) could not be written: \(detail).")
        }
    }

    /// What makes an opened known-hosts file unsafe to write, if anything.
    private static func unsafeFileProblem(_ info: stat) -> String? {
        if info.st_mode & S_IFMT != S_IFREG { return "it is not a regular file" }
        if info.st_uid != geteuid() { return "it belongs to another user (uid \(info.st_uid))" }
        if info.st_mode & 0o022 != 0 { return "its group or other users may write it (mode \(String(info.st_mode & 0o777, radix: 8)))" }
        if info.st_nlink != 1 { return "it has \(info.st_nlink) hard links" }
        return nil
    }
}
