/// Turns bytes from the wire into text that is safe to write to a log or a terminal: control
/// characters (ESC, BEL, CR, NUL, DEL, the C1 range…) and bytes that are not UTF-8 become visible
/// escapes, so a hostile server cannot move a terminal's cursor or forge log lines.
package enum LogText {
    /// `bytes` as one line of text, the trailing line ending (`\r\n` or `\n`) dropped: printable
    /// UTF-8 is kept, a control character becomes `\t`, `\r`, `\n` or `\xHH` (`\u{HHHH}` above
    /// U+00FF), and each byte of an invalid UTF-8 sequence becomes `\xHH`.
    package static func line(_ bytes: UnsafeRawBufferPointer) -> String {
        var end = bytes.count
        if end > 0, bytes[end - 1] == 0x0A { end -= 1 }
        if end > 0, bytes[end - 1] == 0x0D { end -= 1 }
        return escaped(UnsafeRawBufferPointer(rebasing: bytes[0..<end]))
    }

    /// `bytes` with every control character and invalid UTF-8 byte escaped (see ``line(_:)``).
    package static func escaped(_ bytes: UnsafeRawBufferPointer) -> String {
        var text = ""
        text.reserveCapacity(bytes.count)
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                offset += encoded.count
                append(Unicode.UTF8.decode(encoded), to: &text)
            case .error(let length):
                for byte in bytes[offset..<offset + length] { text += hex(byte) }
                offset += length
            case .emptyInput:
                return text
            }
        }
    }

    /// `text` with every control character escaped, for text that did not come as bytes.
    package static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars { append(scalar, to: &result) }
        return result
    }

    private static func append(_ scalar: Unicode.Scalar, to text: inout String) {
        guard isControl(scalar) else {
            text.unicodeScalars.append(scalar)
            return
        }
        switch scalar {
        case "\t": text += "\\t"
        case "\r": text += "\\r"
        case "\n": text += "\\n"
        default:
            if scalar.value <= 0xFF {
                text += hex(UInt8(scalar.value))
            } else {
                text += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
        }
    }

    /// C0 and C1 controls, DEL, and the format characters that reorder or hide text (bidirectional
    /// overrides and isolates, zero-width characters).
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x200B...0x200F, 0x202A...0x202E, 0x2066...0x2069, 0xFEFF: true
        default: false
        }
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return "\\x" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0x0F)])
    }
}
