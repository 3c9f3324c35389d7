import Foundation

/// The body a data task receives for a directory URL (`file:///tmp/`, `ftp://host/pub/`,
/// `sftp://host/home/`, or a plugin's directory): one JSON object per line, UTF-8, in the order the
/// source listed them, with MIME type ``mimeType``.
///
/// Each line encodes one ``URLDirectoryEntry``:
///
/// ```
/// {"name":"notes.txt","type":"file","size":1204,"modificationDate":"2026-11-20T09:14:03Z","permissions":420}
/// {"name":"docs","type":"directory","modificationDate":"2026-11-19T17:00:00Z","permissions":493}
/// {"name":"latest","type":"symbolicLink","symbolicLinkDestination":"docs/v2"}
/// ```
///
/// - `name` (string) and `type` (`file`, `directory`, `symbolicLink` or `other`) are always present;
/// - `size` (bytes), `modificationDate` (RFC 3339 in UTC, fractional seconds when known),
///   `permissions` (the POSIX mode bits as a decimal number: 420 is `0o644`) and
///   `symbolicLinkDestination` appear only when the source knows them.
///
/// The format streams: a consumer can decode each line as it arrives (``decodeEntry(fromLine:)``).
/// ``URLSession/directoryListing(for:delegate:)`` does the decoding for you.
public enum URLDirectoryListing {
    /// The MIME type of a listing body.
    public static let mimeType = "application/vnd.courier.directory-listing+jsonl"

    /// The body for `entries`: one line per entry, each ending in a newline.
    public static func encode(_ entries: [URLDirectoryEntry]) -> Data {
        var body = Data()
        for entry in entries { body.append(encodeLine(entry)) }
        return body
    }

    /// One entry's line, ending in a newline.
    public static func encodeLine(_ entry: URLDirectoryEntry) -> Data {
        var line = (try? encoder.encode(entry)) ?? Data()
        line.append(0x0A)
        return line
    }

    /// The entries of a listing body; empty lines are skipped.
    /// - Throws: `URLError(.cannotParseResponse)` naming the first line that is not an entry.
    public static func decode(_ body: Data, url: URL? = nil) throws -> [URLDirectoryEntry] {
        var entries: [URLDirectoryEntry] = []
        var lineNumber = 0
        for line in body.split(separator: 0x0A, omittingEmptySubsequences: false) {
            lineNumber += 1
            guard !line.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) else { continue }
            guard let entry = decodeEntry(fromLine: Data(line)) else {
                throw URLError(.cannotParseResponse, url: url,
                               description: "Line \(lineNumber) of the directory listing is not an entry.")
            }
            entries.append(entry)
        }
        return entries
    }

    /// One entry from one line of a listing body, or `nil` when the line is not an entry.
    public static func decodeEntry(fromLine line: Data) -> URLDirectoryEntry? {
        guard let entry = try? decoder.decode(URLDirectoryEntry.self, from: line), !entry.name.isEmpty else { return nil }
        return entry
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(formatDate(date))
        }
        return encoder
    }

    private static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = parseDate(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "Not an RFC 3339 date: \(text)")
            }
            return date
        }
        return decoder
    }

    /// RFC 3339 in UTC, to the nearest millisecond; fractional seconds only when there are any.
    /// The milliseconds are written here, rounded: the format style truncates, and a date such as
    /// .635 s, stored as the double just below, would come back a millisecond early.
    static func formatDate(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        let seconds = (milliseconds / 1000).rounded(.down)
        let whole = Date(timeIntervalSince1970: seconds).formatted(Date.ISO8601FormatStyle())
        let fraction = Int(milliseconds - seconds * 1000)
        guard fraction > 0, whole.hasSuffix("Z") else { return whole }
        let digits = String(fraction + 1000).dropFirst() // three digits, leading zeros kept
        return "\(whole.dropLast()).\(digits)Z"
    }

    static func parseDate(_ text: String) -> Date? {
        let plain = Date.ISO8601FormatStyle()
        if let date = try? plain.parse(text) { return date }
        return try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)
    }
}
