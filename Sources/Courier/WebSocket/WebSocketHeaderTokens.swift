/// The comma-separated token lists of the handshake's header fields (`Connection`, `Upgrade`,
/// `Sec-WebSocket-Protocol`, `Sec-WebSocket-Extensions`), and the token rule subprotocol names
/// follow (RFC 6455 §4.1, RFC 9110 §5.6.2).
enum WebSocketHeaderTokens {
    /// The elements of a list value: split at commas, spaces and tabs trimmed, empty ones dropped.
    /// Several fields of one name arrive joined by ", " and split the same way.
    static func elements(of value: String?) -> [String] {
        guard let value else { return [] }
        return value.split(separator: ",").compactMap { element in
            let trimmed = element.trimmingPrefix(while: isBlank).reversed().drop(while: isBlank).reversed()
            return trimmed.isEmpty ? nil : String(trimmed)
        }
    }

    /// Whether `list` holds `token`, compared without regard to ASCII case.
    static func list(_ list: String?, contains token: String) -> Bool {
        elements(of: list).contains { $0.lowercased() == token.lowercased() }
    }

    /// Whether `text` is a token: one or more of RFC 9110's `tchar`s (letters, digits and
    /// ``!#$%&'*+-.^_`|~``).
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"):
                return true
            default:
                return "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
        }
    }

    private static func isBlank(_ character: Character) -> Bool {
        character == " " || character == "\t"
    }
}
