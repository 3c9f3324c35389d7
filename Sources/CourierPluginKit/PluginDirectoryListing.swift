import Foundation

/// One entry of a directory listing a plugin answers with; see ``PluginDirectoryListing``.
///
/// It mirrors Courier's `URLDirectoryEntry` field for field (the kit does not depend on Courier):
/// set what your source knows and leave the rest `nil`, which leaves the key out of the line.
public struct PluginDirectoryEntry: Sendable, Hashable, Codable {
    /// What an entry is (the `type` key).
    public enum EntryType: String, Sendable, Hashable, Codable, CaseIterable {
        /// A regular file.
        case file
        /// A directory.
        case directory
        /// A symbolic link; ``PluginDirectoryEntry/symbolicLinkDestination`` says where it points
        /// when the source tells.
        case symbolicLink
        /// Anything else: a device, socket, pipe, or a type the source does not name.
        case other
    }

    /// The entry's name within its directory: not empty, no slashes, never `.` or `..`.
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
}

/// Writes the body a plugin answers a directory URL with, so that the host's
/// `URLSession.directoryListing(from:)` and every other client of Courier's listings can read it.
///
/// The format is the contract documented in Courier's `URLDirectoryListing` (and in
/// `Documentation/Architecture.md`, "Directory listings"); this encoder produces byte-identical
/// lines for the same entry. The body is UTF-8 JSON Lines, one object per entry, each line ending in
/// a newline, with MIME type ``mimeType``:
///
/// ```
/// {"modificationDate":"2026-11-20T09:14:03Z","name":"notes.txt","permissions":420,"size":1204,"type":"file"}
/// {"name":"docs","type":"directory"}
/// {"name":"latest","symbolicLinkDestination":"docs/v2","type":"symbolicLink"}
/// ```
///
/// - Keys are sorted; `name` and `type` (`file`, `directory`, `symbolicLink`, `other`) are always
///   present, `size`, `modificationDate`, `permissions` and `symbolicLinkDestination` only when known.
/// - `modificationDate` is RFC 3339 in UTC, with fractional seconds (milliseconds) only when the
///   date has a fraction; `permissions` is the POSIX mode bits as a decimal number (420 is `0o644`).
/// - Slashes are not escaped; non-ASCII characters are written as UTF-8.
///
/// Answer with it like this (a plugin in C does the same: this MIME type and these lines):
///
/// ```swift
/// let body = PluginDirectoryListing.encode(entries)
/// client.didReceive(PluginResponse(mimeType: PluginDirectoryListing.mimeType, textEncodingName: "utf-8",
///                                  expectedContentLength: Int64(body.count)))
/// client.didLoad(body)
/// client.didFinishLoading()
/// ```
///
/// A long listing can be streamed: send the response with an unknown length (-1) and one
/// ``encodeLine(_:)`` per ``PluginClient/didLoad(_:)`` as entries come.
public enum PluginDirectoryListing {
    /// The MIME type of a listing body (Courier's `URLDirectoryListing.mimeType`).
    public static let mimeType = "application/vnd.courier.directory-listing+jsonl"

    /// The body for `entries`, in the order given: one line per entry, each ending in a newline.
    public static func encode(_ entries: [PluginDirectoryEntry]) -> Data {
        var body = Data()
        for entry in entries { body.append(encodeLine(entry)) }
        return body
    }

    /// One entry's line, ending in a newline.
    public static func encodeLine(_ entry: PluginDirectoryEntry) -> Data {
        var line = (try? encoder.encode(entry)) ?? Data()
        line.append(0x0A)
        return line
    }

    /// Configured exactly as Courier's `URLDirectoryListing` encoder is.
    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(formatDate(date))
        }
        return encoder
    }

    /// RFC 3339 in UTC, to the nearest millisecond, as Courier's `URLDirectoryListing` writes it
    /// (the kit does not link Courier): the milliseconds rounded here, since the format style
    /// truncates and a date stored just below .635 s would come back a millisecond early.
    static func formatDate(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        let seconds = (milliseconds / 1000).rounded(.down)
        let whole = Date(timeIntervalSince1970: seconds).formatted(Date.ISO8601FormatStyle())
        let fraction = Int(milliseconds - seconds * 1000)
        guard fraction > 0, whole.hasSuffix("Z") else { return whole }
        return "\(whole.dropLast()).\(String(fraction + 1000).dropFirst())Z"
    }
}
