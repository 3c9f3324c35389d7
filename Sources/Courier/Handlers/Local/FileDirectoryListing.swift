import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The entries of a local directory for the `file:` handler's listings, sorted by name, with what
/// `lstat` tells (symbolic links are described, not followed).
enum FileDirectoryListing {
    /// Whether `path` is a directory (following symbolic links, as opening it would).
    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// The entries of the directory at `path`.
    /// - Throws: the `errno` of a directory that cannot be read.
    static func entries(at path: String) throws(FileListingError) -> [URLDirectoryEntry] {
        guard let directory = opendir(path) else { throw FileListingError(code: errno) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." && !name.isEmpty { names.append(name) }
        }
        let base = path.hasSuffix("/") ? path : path + "/"
        return names.sorted().map { entry(named: $0, at: base + $0) }
    }

    private static func entry(named name: String, at path: String) -> URLDirectoryEntry {
        var info = stat()
        guard lstat(path, &info) == 0 else { return URLDirectoryEntry(name: name, type: .other) }
        let type: URLDirectoryEntry.EntryType
        var destination: String?
        switch info.st_mode & S_IFMT {
        case S_IFREG: type = .file
        case S_IFDIR: type = .directory
        case S_IFLNK:
            type = .symbolicLink
            destination = try? FileManager.default.destinationOfSymbolicLink(atPath: path)
        default: type = .other
        }
        let modified = Date(timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec) + TimeInterval(info.st_mtim.tv_nsec) / 1e9)
        return URLDirectoryEntry(name: name, type: type, size: Int64(info.st_size), modificationDate: modified,
                                 permissions: UInt16(info.st_mode & 0o7777), symbolicLinkDestination: destination)
    }
}

/// A directory that could not be read, with its `errno`.
struct FileListingError: Error {
    let code: Int32
}
