import Foundation

/// Collects header lines as libcurl hands them over and yields one ``CurlResponseHead`` per
/// complete block. Informational (1xx) blocks are dropped; folded lines are joined; a malformed
/// status line is reported as such.
///
/// libcurl also hands over the trailer fields of a chunked (HTTP/1.1) or HTTP/2 body through the
/// header callback, after the body: a block that follows such a head and does not start with a
/// status line is a trailer block, and is skipped (a later response in the same transfer, after
/// libcurl's own authentication round, starts with its status line again).
///
/// This runs for every header line of every response, so it works on the line's bytes: names and
/// values are trimmed before they become strings, the status line is parsed without splitting a
/// string, and each name is lowercased once for the field index and given its usual
/// capitalisation (``HTTPURLResponse/canonicalName(_:)``) here, so that the response can take the
/// fields as they are. A well-known name takes both strings, made once, from
/// ``HTTPWellKnownFieldNames`` without making or hashing a string.
struct CurlResponseHeadParser {
    private var statusLine: String?
    private var fields = HTTPHeaderFields()
    /// The last field line read, added to `fields` once the next line shows it is complete. A
    /// folded (obs-fold) continuation line is appended to it here, so joining costs the length of
    /// the line, not of the value so far: a response of many folded lines is parsed in linear time.
    private var pending: PendingField?
    /// The last head delivered may be followed by trailer fields (a chunked or HTTP/2 body).
    private var trailersMayFollow = false
    /// The lines being read are trailer fields, skipped up to the empty line that ends them.
    private var readingTrailers = false
    /// Room reserved for the fields of each response, so that collecting them rarely regrows.
    private static let expectedFieldCount = 16

    /// A field whose value may still grow by continuation lines.
    private struct PendingField {
        var name: String
        /// The name's index key when the parser computed it from the wire bytes.
        var key: String?
        var value: String
    }

    /// What one line completed.
    enum Outcome {
        case needMore
        case head(CurlResponseHead)
        case informational
        case malformed(String)
    }

    /// Feeds one line (with its CRLF).
    mutating func consume(_ bytes: UnsafeRawBufferPointer) -> Outcome {
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D { end -= 1 }
        if end == 0 {
            defer { reset() }
            addPendingField()
            if readingTrailers {
                readingTrailers = false
                return .needMore
            }
            guard var statusLine else { return .needMore }
            guard let (version, code) = statusLine.withUTF8({ Self.parseStatusLine(UnsafeRawBufferPointer($0)) }) else {
                return .malformed(statusLine)
            }
            // libcurl treats a 101 it did not ask for (no h2c or WebSocket upgrade) as the final
            // head and what follows as the body: so does the parser, or the load would wait for a
            // head that never comes.
            if (100..<200).contains(code), code != 101 { return .informational }
            trailersMayFollow = Self.mayHaveTrailers(version: version, fields: fields)
            return .head(CurlResponseHead(statusCode: code, httpVersion: version, fields: fields))
        }
        if readingTrailers { return .needMore }
        if statusLine == nil {
            if trailersMayFollow, !Self.startsWithHTTP(bytes, end: end) {
                readingTrailers = true
                return .needMore
            }
            statusLine = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<end]), as: UTF8.self)
            fields = HTTPHeaderFields(minimumCapacity: Self.expectedFieldCount)
            return .needMore
        }
        if bytes[0] == 0x20 || bytes[0] == 0x09, pending != nil {
            // Appended in place: the pending value is not shared, so this copies only the line.
            pending?.value.append(" ")
            pending?.value.append(Self.trimmedString(bytes, from: 0, to: end))
            return .needMore
        }
        guard let base = bytes.baseAddress, let found = memchr(base, Int32(UInt8(ascii: ":")), end) else { return .needMore }
        let colon = UnsafeRawPointer(found) - base
        let (lower, upper) = Self.trimmed(bytes, from: 0, to: colon)
        guard lower < upper else { return .needMore }
        addPendingField()
        let value = Self.trimmedString(bytes, from: colon + 1, to: end)
        let nameBytes = UnsafeRawBufferPointer(rebasing: bytes[lower..<upper])
        if let known = HTTPWellKnownFieldNames.shared.entry(forName: nameBytes) {
            pending = PendingField(name: known.canonical, key: known.key, value: value)
        } else if let key = HTTPHeaderFields.key(forASCII: nameBytes) {
            pending = PendingField(name: String(decoding: nameBytes, as: UTF8.self), key: key, value: value)
        } else {
            pending = PendingField(name: HTTPURLResponse.canonicalName(String(decoding: nameBytes, as: UTF8.self)),
                                   key: nil, value: value)
        }
        return .needMore
    }

    /// Adds the pending field, now complete, to the head's fields.
    private mutating func addPendingField() {
        guard let field = pending else { return }
        pending = nil
        if let key = field.key {
            fields.add(field.value, for: field.name, key: key)
        } else {
            fields.add(field.value, for: field.name)
        }
    }

    /// Whether a body after this head can carry trailer fields: chunked HTTP/1.1, or HTTP/2 and later.
    private static func mayHaveTrailers(version: String, fields: HTTPHeaderFields) -> Bool {
        if !version.hasPrefix("HTTP/1") { return true }
        return fields.value(for: "Transfer-Encoding")?.lowercased().contains("chunked") == true
    }

    /// Whether the line starts with "HTTP/", as every status line does.
    private static func startsWithHTTP(_ bytes: UnsafeRawBufferPointer, end: Int) -> Bool {
        let prefix: [UInt8] = [0x48, 0x54, 0x54, 0x50, 0x2F] // "HTTP/"
        guard end >= prefix.count else { return false }
        for offset in 0..<prefix.count where bytes[offset] != prefix[offset] { return false }
        return true
    }

    /// The bounds of `start..<end` without surrounding spaces and tabs.
    @inline(__always)
    private static func trimmed(_ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int) -> (Int, Int) {
        var lower = start
        var upper = end
        while lower < upper, bytes[lower] == 0x20 || bytes[lower] == 0x09 { lower += 1 }
        while upper > lower, bytes[upper - 1] == 0x20 || bytes[upper - 1] == 0x09 { upper -= 1 }
        return (lower, upper)
    }

    /// The bytes in `start..<end` without surrounding spaces and tabs, as a string.
    private static func trimmedString(_ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int) -> String {
        let (lower, upper) = trimmed(bytes, from: start, to: end)
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[lower..<upper]), as: UTF8.self)
    }

    private mutating func reset() {
        statusLine = nil
        fields = HTTPHeaderFields()
        pending = nil
    }

    /// "HTTP/1.1 200 OK" → ("HTTP/1.1", 200); "HTTP/2 204" → ("HTTP/2", 204).
    static func parseStatusLine(_ line: String) -> (String, Int)? {
        var line = line
        return line.withUTF8 { parseStatusLine(UnsafeRawBufferPointer($0)) }
    }

    /// The same on the line's bytes: words are separated by runs of spaces; the first must be
    /// "HTTP/" and a version of digits and dots ("1.1", "2"), the second a three-digit code from
    /// 100 to 999.
    private static func parseStatusLine(_ bytes: UnsafeRawBufferPointer) -> (String, Int)? {
        let space = UInt8(ascii: " ")
        var position = 0
        while position < bytes.count, bytes[position] == space { position += 1 }
        let versionStart = position
        while position < bytes.count, bytes[position] != space { position += 1 }
        let versionEnd = position
        while position < bytes.count, bytes[position] == space { position += 1 }
        let codeStart = position
        while position < bytes.count, bytes[position] != space { position += 1 }
        guard versionEnd - versionStart >= 6, position - codeStart == 3 else { return nil }
        guard startsWithHTTP(UnsafeRawBufferPointer(rebasing: bytes[versionStart...]), end: versionEnd - versionStart) else { return nil }
        for index in (versionStart + 5)..<versionEnd {
            let byte = bytes[index]
            guard (byte >= 0x30 && byte <= 0x39) || byte == UInt8(ascii: ".") else { return nil }
        }
        var code = 0
        for index in codeStart..<position {
            let digit = bytes[index]
            guard digit >= 0x30, digit <= 0x39 else { return nil }
            code = code * 10 + Int(digit - 0x30)
        }
        guard (100...999).contains(code) else { return nil }
        return (String(decoding: UnsafeRawBufferPointer(rebasing: bytes[versionStart..<versionEnd]), as: UTF8.self), code)
    }
}
