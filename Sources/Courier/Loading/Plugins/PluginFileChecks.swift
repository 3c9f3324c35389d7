import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The checks Courier makes on plugin files before trusting them, as OpenSSH does for its keys:
/// each file and its directory must belong to the current user or root and must not be writable by
/// the group or others; a library must be a shared library.
enum PluginFileChecks {
    /// A file's device and inode, to recognise the same file loaded twice.
    struct Identity: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64
    }

    /// Why `url` (a directory) may not hold plugins, or nil.
    static func directoryProblem(_ url: URL) -> PluginLoadError.Reason? {
        var info = stat()
        guard stat(url.path, &info) == 0 else {
            return .unreadableDirectory(String(cString: strerror(errno)))
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { return .unreadableDirectory("not a directory") }
        return ownershipProblem(info, path: url.path, kind: "directory")
    }

    /// What can be wrong with a plugin file.
    enum FileProblem: Error {
        /// It cannot be examined (it does not exist, or a directory on the way is unreadable).
        case unreadable(String)
        /// It is not a regular file.
        case notRegular
        /// Its owner or mode is unsafe.
        case insecure(PluginLoadError.Reason)
    }

    /// Checks that the regular file `url` may be trusted; on success, its identity.
    static func fileCheck(_ url: URL) -> Result<Identity, FileProblem> {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return .failure(.unreadable(String(cString: strerror(errno)))) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return .failure(.notRegular) }
        if let problem = ownershipProblem(info, path: url.path, kind: "file") { return .failure(.insecure(problem)) }
        // A symbolic link's target may live elsewhere: its real directory must be safe too.
        let real = url.resolvingSymlinksInPath().deletingLastPathComponent()
        if real.path != url.deletingLastPathComponent().path, let problem = directoryProblem(real) {
            return .failure(.insecure(problem))
        }
        return .success(Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)))
    }

    /// The problem with a file or directory's owner or mode, or nil.
    private static func ownershipProblem(_ info: stat, path: String, kind: String) -> PluginLoadError.Reason? {
        let mode = info.st_mode & 0o7777
        if mode & (S_IWGRP | S_IWOTH) != 0 {
            return .insecurePermissions("the \(kind) \(path) is writable by others than its owner (mode \(String(mode, radix: 8)))")
        }
        let owner = info.st_uid
        if owner != 0 && owner != geteuid() {
            return .insecurePermissions("the \(kind) \(path) belongs to another user (uid \(owner))")
        }
        return nil
    }

    /// Whether the file at `url` starts like a shared library (ELF, or Mach-O on Apple systems).
    static func looksLikeSharedLibrary(_ url: URL) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: url.path) else { return false }
        defer { try? handle.close() }
        guard let head = try? handle.read(upToCount: 4), head.count == 4 else { return false }
        let magic = [UInt8](head)
        if magic == [0x7F, 0x45, 0x4C, 0x46] { return true }  // ELF
        let word = UInt32(magic[0]) << 24 | UInt32(magic[1]) << 16 | UInt32(magic[2]) << 8 | UInt32(magic[3])
        return [0xFEEDFACF, 0xCFFAEDFE, 0xFEEDFACE, 0xCEFAEDFE, 0xCAFEBABE].contains(word)
    }
}
