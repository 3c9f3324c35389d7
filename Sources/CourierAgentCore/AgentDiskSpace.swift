import Courier
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Whether a download fits on the file system of the agent's `downloads/` directory, judged by
/// `statvfs`: `countOfBytesClientExpectsToReceive` before the transfer starts (a download that
/// does not fit by this best guess waits for space, as Apple uses the hint for scheduling), the
/// response's length once the first bytes arrive (a download that cannot fit then fails with
/// `cannotWriteToFile` — the error of a disk that fills up during a download — rather than fill
/// the disk first).
enum AgentDiskSpace {
    /// The bytes an unprivileged process may still write on the file system of `path`
    /// (`f_bavail` blocks of `f_frsize`), or `nil` when `statvfs` fails.
    static func available(at path: String) -> Int64? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        let (bytes, overflow) = Int64(clamping: info.f_bavail).multipliedReportingOverflow(by: Int64(clamping: info.f_frsize))
        return overflow ? .max : bytes
    }

    /// The failure of a download that needs `needed` more bytes in `directory` when fewer are
    /// available; `nil` when it fits (or the free space is unknown).
    static func shortage(needed: Int64, in directory: URL, url: String) -> AgentErrorRecord? {
        guard needed > 0, let available = available(at: directory.path), available < needed else { return nil }
        return AgentErrorRecord(code: .cannotWriteToFile,
                                message: "No space left for the download: it needs \(needed) bytes and \(directory.path) has \(available) free.",
                                url: url)
    }
}
