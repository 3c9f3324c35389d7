import Foundation

/// One entry of a directory listing, whatever the scheme that produced it (`file:`, `ftp:`, `sftp:`
/// or a plugin's).
///
/// Handlers fill in what their source knows: a `file:` listing has everything, an FTP server that
/// answers `MLSD` gives sizes, types, dates and usually permissions, a Windows-style `LIST` gives no
/// permissions. Unknown values are `nil`.
///
/// Get entries with ``URLSession/directoryListing(from:delegate:)``; a data task on a directory URL
/// returns them as a body in ``URLDirectoryListing``'s format.
public struct URLDirectoryEntry: Sendable, Hashable, Codable {
    /// What an entry is.
    public enum EntryType: String, Sendable, Hashable, Codable, CaseIterable {
        /// A regular file.
        case file
        /// A directory (a URL for it ends in `/`).
        case directory
        /// A symbolic link; ``URLDirectoryEntry/symbolicLinkDestination`` says where it points when
        /// the source tells.
        case symbolicLink
        /// Anything else: a device, socket, pipe, or a type the source does not name.
        case other
    }

    /// The entry's name within its directory (no slashes), never `.` or `..`.
    public var name: String
    /// What the entry is.
    public var type: EntryType
    /// The size in bytes, when known (for a symbolic link: the link itself).
    public var size: Int64?
    /// The last modification time, when known.
    public var modificationDate: Date?
    /// POSIX permission bits (for example `0o644`), when known.
    public var permissions: UInt16?
    /// Where a symbolic link points, as the source wrote it, when known.
    public var symbolicLinkDestination: String?

    /// An entry with the given fields.
    public init(name: String, type: EntryType, size: Int64? = nil, modificationDate: Date? = nil,
                permissions: UInt16? = nil, symbolicLinkDestination: String? = nil) {
        self.name = name
        self.type = type
        self.size = size
        self.modificationDate = modificationDate
        self.permissions = permissions
        self.symbolicLinkDestination = symbolicLinkDestination
    }

    /// The entry's URL inside the directory at `directory` (directories get a trailing `/`).
    public func url(relativeTo directory: URL) -> URL {
        directory.appendingPathComponent(name, isDirectory: type == .directory)
    }
}
