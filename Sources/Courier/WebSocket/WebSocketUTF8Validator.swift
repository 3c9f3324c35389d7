/// Checks UTF-8 incrementally, across the fragments of a text message: bytes are fed in pieces,
/// split anywhere (even inside a code point), and the first byte that cannot continue a valid
/// sequence is reported at once (RFC 6455 §8.1: fail fast, close with 1007).
///
/// Valid means Unicode's well-formed UTF-8 (the Unicode Standard's table 3-7): no overlong forms,
/// no surrogates (U+D800–U+DFFF), nothing above U+10FFFF. A message is valid when every piece was
/// and `isAtCodePointBoundary` holds at its end.
struct WebSocketUTF8Validator: Sendable {
    /// Continuation bytes the current code point still needs.
    private var pending = 0
    /// The range the next continuation byte must fall in (narrower than 0x80–0xBF only for the
    /// byte after E0, ED, F0 and F4).
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF

    /// A validator at the start of a message.
    init() {}

    /// Whether no code point is left unfinished: the end of a message may come here.
    var isAtCodePointBoundary: Bool { pending == 0 }

    /// Checks the next piece of the message; `false` as soon as a byte makes it invalid.
    mutating func validate(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        let count = bytes.count
        while index < count {
            // ASCII runs, the common case, eight bytes at a time between code points.
            if pending == 0, let base = bytes.baseAddress {
                while index + 8 <= count,
                      base.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                    index += 8
                }
                if index == count { break }
            }
            guard accept(bytes[index]) else { return false }
            index += 1
        }
        return true
    }

    /// Takes one byte; `false` when it cannot come next.
    private mutating func accept(_ byte: UInt8) -> Bool {
        if pending > 0 {
            guard byte >= lower, byte <= upper else { return false }
            pending -= 1
            lower = 0x80
            upper = 0xBF
            return true
        }
        switch byte {
        case 0x00...0x7F: return true
        case 0xC2...0xDF: pending = 1
        case 0xE0: pending = 2; lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: pending = 2
        case 0xED: pending = 2; upper = 0x9F
        case 0xF0: pending = 3; lower = 0x90
        case 0xF1...0xF3: pending = 3
        case 0xF4: pending = 3; upper = 0x8F
        default: return false
        }
        return true
    }
}
