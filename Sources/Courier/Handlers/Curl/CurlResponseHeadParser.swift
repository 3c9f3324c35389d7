import Foundation

/// Collects header lines as libcurl hands them over and yields one ``CurlResponseHead`` per
/// complete block. Informational (1xx) blocks are dropped; folded lines are joined; a malformed
/// status line is reported as such.
struct CurlResponseHeadParser {
    private var statusLine: String?
    private var fields = HTTPHeaderFields()
    private var lastName: String?

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
            guard let statusLine else { return .needMore }
            guard let (version, code) = Self.parseStatusLine(statusLine) else { return .malformed(statusLine) }
            if (100..<200).contains(code) { return .informational }
            return .head(CurlResponseHead(statusCode: code, httpVersion: version, fields: fields))
        }
        if statusLine == nil {
            statusLine = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<end]), as: UTF8.self)
            return .needMore
        }
        if bytes[0] == 0x20 || bytes[0] == 0x09, let lastName {
            let previous = fields.value(for: lastName) ?? ""
            fields.set(previous + " " + Self.trimmedString(bytes, from: 0, to: end), for: lastName)
            return .needMore
        }
        // Split and trim on bytes: this runs for every header line of every response.
        guard let colon = bytes[0..<end].firstIndex(of: UInt8(ascii: ":")) else { return .needMore }
        let name = Self.trimmedString(bytes, from: 0, to: colon)
        let value = Self.trimmedString(bytes, from: colon + 1, to: end)
        guard !name.isEmpty else { return .needMore }
        fields.add(value, for: name)
        lastName = name
        return .needMore
    }

    /// The bytes in `start..<end` without surrounding spaces and tabs, as a string.
    private static func trimmedString(_ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int) -> String {
        var lower = start
        var upper = end
        while lower < upper, bytes[lower] == 0x20 || bytes[lower] == 0x09 { lower += 1 }
        while upper > lower, bytes[upper - 1] == 0x20 || bytes[upper - 1] == 0x09 { upper -= 1 }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[lower..<upper]), as: UTF8.self)
    }

    private mutating func reset() {
        statusLine = nil
        fields = HTTPHeaderFields()
        lastName = nil
    }

    /// "HTTP/1.1 200 OK" → ("HTTP/1.1", 200); "HTTP/2 204" → ("HTTP/2", 204).
    static func parseStatusLine(_ line: String) -> (String, Int)? {
        let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), parts[1].count == 3,
              let code = Int(parts[1]), (100...999).contains(code) else { return nil }
        return (String(parts[0]), code)
    }
}
