import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A directory holding one user's private store files (the data directory, the URL cache's
/// directory): mode 0700, and, when `strict`, the user's own real directory.
///
/// Only the directory itself is checked (its parents are the user's business): a directory the
/// user owns with looser permissions is tightened to 0700. With `strict`, a symbolic link (even to
/// a directory) and a directory owned by another user are refused, so nothing is read from or
/// written to a place someone else controls.
package enum PrivateDirectory {

    /// What ``inspect(_:strict:)`` found.
    package enum State: Equatable, Sendable {
        /// Nothing is there yet.
        case missing
        /// A directory the store may use (tightened to 0700 when it was looser).
        case usable
        /// Something the store must not use: not a directory, or, when strict, a symbolic link or
        /// another user's directory.
        case refused
    }

    private static let directoryType: mode_t = 0o040000
    private static let linkType: mode_t = 0o120000

    /// Checks `directory` without creating it, tightening the user's own directory to 0700.
    package static func inspect(_ directory: URL, strict: Bool) -> State {
        var info = stat()
        let found = strict ? lstat(directory.path, &info) : stat(directory.path, &info)
        guard found == 0 else { return errno == ENOENT ? .missing : .refused }
        let type = info.st_mode & StoreFile.fileTypeMask
        guard type != linkType, type == directoryType else { return .refused }
        let own = info.st_uid == geteuid()
        if strict, !own { return .refused }
        if own, info.st_mode & 0o077 != 0, chmod(directory.path, 0o700) != 0, strict {
            return .refused // still open to others and cannot be closed
        }
        return .usable
    }

    /// Creates `directory` (and its parents) with mode 0700, or checks and tightens the existing
    /// one (``inspect(_:strict:)``); returns whether it is now usable.
    package static func prepare(_ directory: URL, strict: Bool) -> Bool {
        if inspect(directory, strict: strict) == .missing {
            try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                     attributes: [.posixPermissions: 0o700])
        }
        return inspect(directory, strict: strict) == .usable
    }
}
