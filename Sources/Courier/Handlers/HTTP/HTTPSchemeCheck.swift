import Foundation

/// Whether a URL's scheme is `http` or `https`, read from the start of its absolute string.
///
/// `url.scheme?.lowercased()` makes two strings (about 560 instructions) and runs several times
/// per request; the absolute string is stored, and a URL with a scheme starts with it and a colon
/// (a relative URL's starts with its base's scheme, which is also what `scheme` answers).
enum HTTPSchemeCheck {
    /// Whether `url`'s scheme is `https` (any case).
    static func isHTTPS(_ url: URL) -> Bool {
        hasScheme(url, "https:")
    }

    /// Whether `url`'s scheme is `http` (any case).
    static func isHTTP(_ url: URL) -> Bool {
        hasScheme(url, "http:")
    }

    /// Whether `url`'s absolute string starts with `prefix` (lowercase ASCII, ending in ":"),
    /// compared case-insensitively.
    private static func hasScheme(_ url: URL, _ prefix: StaticString) -> Bool {
        var string = url.absoluteString
        return string.withUTF8 { bytes in
            let count = prefix.utf8CodeUnitCount
            guard bytes.count >= count else { return false }
            let expected = prefix.utf8Start
            for offset in 0..<count {
                let byte = bytes[offset]
                let folded = (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
                if folded != expected[offset] { return false }
            }
            return true
        }
    }
}
