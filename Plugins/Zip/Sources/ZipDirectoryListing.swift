import CourierPluginKit
import Foundation
import ZIPFoundation

/// The children of a directory inside an archive, as Courier listing entries.
///
/// A zip archive has no real directories: an entry ending in `/` is an explicit one, and any path
/// with more components below the listed directory implies one. Each child is listed once, sorted by
/// name; an explicit entry's fields win over an implied directory of the same name.
///
/// - `type`: `directory` for explicit and implied directories, `symbolicLink` when ZIPFoundation
///   says so, `file` otherwise;
/// - `size`: the uncompressed size, for files and symbolic links;
/// - `modificationDate`: the entry's (DOS date and time, read as UTC by ZIPFoundation);
/// - `permissions`: from the external attributes of an entry made on Unix or macOS, else absent;
/// - `symbolicLinkDestination`: a stored link's target, when it is short UTF-8.
///
/// Implied directories carry only a name and a type. Children named `.` or `..` (from entries such
/// as `../x`) are left out.
enum ZipDirectoryListing {
    /// The longest symbolic link target read (Linux's `PATH_MAX`).
    static let maximumLinkLength = 4096

    /// The children of the directory `prefix` (empty for the root, else ending in `/`), or nil when
    /// the archive has neither an entry `prefix` nor entries below it.
    static func entries(under prefix: String, in archive: Archive, directory: ZipCentralDirectory,
                        reader: ZipFileReader) -> [PluginDirectoryEntry]? {
        var children: [String: PluginDirectoryEntry] = [:]
        var links: [String: Int] = [:]
        for (index, entry) in archive.enumerated() where entry.path.hasPrefix(prefix) && entry.path != prefix {
            let components = entry.path.dropFirst(prefix.count).split(separator: "/")
            guard let first = components.first, first != ".", first != ".." else { continue }
            let name = String(first)
            if components.count == 1 {
                let listed = listingEntry(named: name, for: entry)
                children[name] = listed
                links[name] = listed.type == .symbolicLink ? index : nil
            } else if children[name] == nil {
                children[name] = PluginDirectoryEntry(name: name, type: .directory)
            }
        }
        guard !children.isEmpty || prefix.isEmpty || archive[prefix] != nil else { return nil }
        // The links' targets, read with one more walk of the central directory.
        let records = (try? directory.records(at: Set(links.values))) ?? [:]
        for (name, index) in links {
            if let record = records[index] { children[name]?.symbolicLinkDestination = linkDestination(of: record, reader: reader) }
        }
        return children.keys.sorted().compactMap { children[$0] }
    }

    /// The listing entry for an archive entry that is a direct child of the listed directory
    /// (a link's destination is filled in by ``entries(under:in:directory:reader:)``).
    static func listingEntry(named name: String, for entry: Entry) -> PluginDirectoryEntry {
        let type: PluginDirectoryEntry.EntryType
        if entry.path.hasSuffix("/") {
            type = .directory
        } else {
            switch entry.type {
            case .directory: type = .directory
            case .symlink: type = .symbolicLink
            case .file: type = .file
            }
        }
        var listed = PluginDirectoryEntry(name: name, type: type)
        listed.modificationDate = entry.fileAttributes[.modificationDate] as? Date
        listed.permissions = unixPermissions(of: entry)
        if type != .directory { listed.size = Int64(exactly: entry.uncompressedSize) }
        return listed
    }

    /// The POSIX permission bits of an entry made on Unix or macOS (the high 16 bits of its external
    /// attributes); nil for other systems or when the mode is zero.
    ///
    /// ZIPFoundation's `fileAttributes` fills in 0644 or 0755 for entries that carry no mode, so the
    /// raw fields are read from its central directory record by reflection. Should a later
    /// ZIPFoundation rename them, permissions are left out rather than guessed.
    static func unixPermissions(of entry: Entry) -> UInt16? {
        let record = Mirror(reflecting: entry)
        guard let madeBy = record.descendant("centralDirectoryStructure", "versionMadeBy") as? UInt16,
              let external = record.descendant("centralDirectoryStructure", "externalFileAttributes") as? UInt32
        else { return nil }
        // APPNOTE.TXT 4.4.2: the upper byte of "version made by" is the host system; 3 is Unix, 19 OS X.
        let system = madeBy >> 8
        guard system == 3 || system == 19 else { return nil }
        let mode = UInt16(truncatingIfNeeded: external >> 16)
        return mode == 0 ? nil : mode & 0o7777
    }

    /// A stored symbolic link's target: its data, when short, uncompressed and UTF-8.
    static func linkDestination(of record: ZipCentralDirectory.Record, reader: ZipFileReader) -> String? {
        let limit = UInt64(maximumLinkLength)
        guard record.compressionMethod == 0, record.uncompressedSize <= limit, record.compressedSize <= limit else { return nil }
        var target = Data()
        do {
            try ZipEntryReader(reader: reader, record: record).read(chunkSize: maximumLinkLength) { target.append($0) }
        } catch {
            return nil
        }
        guard let destination = String(data: target, encoding: .utf8), !destination.isEmpty else { return nil }
        return destination
    }
}
