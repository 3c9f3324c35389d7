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
        let line = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<end]), as: UTF8.self)
        if line.isEmpty {
            defer { reset() }
            guard let statusLine else { return .needMore }
            guard let (version, code) = Self.parseStatusLine(statusLine) else { return .malformed(statusLine) }
            if (100..<200).contains(code) { return .informational }
            return .head(CurlResponseHead(statusCode: code, httpVersion: version, fields: fields))
        }
        if statusLine == nil {
            statusLine = line
            return .needMore
        }
        if line.first == " " || line.first == "\t", let lastName {
            let previous = fields.value(for: lastName) ?? ""
            fields.set(previous + " " + line.trimmingCharacters(in: .whitespaces), for: lastName)
            return .needMore
        }
        guard let colon = line.firstIndex(of: ":") else { return .needMore }
        let name = String(line[..<colon]).trimmingCharacters(in: .whitespaces)
        let value = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { return .needMore }
        fields.add(value, for: name)
        lastName = name
        return .needMore
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
