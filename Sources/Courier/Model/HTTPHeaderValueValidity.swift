import Foundation

/// Which header values a request takes, by FoundationNetworking's rule for
/// `setValue(_:forHTTPHeaderField:)` and `addValue(_:forHTTPHeaderField:)`: a value holding NUL, a
/// lone CR or LF, or a CRLF not followed by a space or tab (so not a folded line), is dropped when
/// set. A folded value (`"a\r\n b"`) is kept as FoundationNetworking keeps it; the HTTP handler
/// still refuses to send any line break (see `HTTPRequestHeadValidation`).
enum HTTPHeaderValueValidity {
    /// Whether `value` may be stored as a header value.
    static func isValid(_ value: String) -> Bool {
        // The usual value holds none of the three bytes: one pass, no copy.
        guard value.utf8.contains(where: { $0 == 0 || $0 == 0x0A || $0 == 0x0D }) else { return true }
        let bytes = Array(value.utf8)
        var index = 0
        while index < bytes.count {
            switch bytes[index] {
            case 0, 0x0A:
                return false
            case 0x0D:
                guard index + 2 < bytes.count, bytes[index + 1] == 0x0A,
                      bytes[index + 2] == 0x20 || bytes[index + 2] == 0x09 else { return false }
                index += 3
            default:
                index += 1
            }
        }
        return true
    }
}
