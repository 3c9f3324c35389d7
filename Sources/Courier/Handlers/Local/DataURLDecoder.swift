import Foundation

/// Decodes `data:` URLs (RFC 2397): `data:[<media type>][;base64],<data>`.
///
/// Works on the URL's UTF-8 bytes in one pass, so multi-megabyte URLs decode in linear time. The
/// header is parsed as index ranges of those bytes, with no intermediate arrays: a short `data:`
/// URL costs a few allocations (the body, and the media type when it is longer than a small string).
enum DataURLDecoder {
    /// A decoded `data:` URL.
    struct Decoded: Equatable {
        /// The media type, lowercased (`text/plain` when the URL gives none).
        var mimeType: String
        /// The `charset` parameter, if any (`US-ASCII` when the URL gives no media type at all).
        var textEncodingName: String?
        /// The bytes.
        var data: Data
    }

    /// Why a `data:` URL could not be decoded.
    enum Failure: Error, Equatable {
        case notADataURL
        case missingComma
        case invalidMediaType(String)
        case invalidPercentEscape
        case invalidBase64
    }

    /// Decodes `string`, the whole URL including the `data:` prefix.
    static func decode(_ string: String) -> Result<Decoded, Failure> {
        var text = string
        return text.withUTF8 { decode(bytes: $0) }
    }

    /// What the header (between `data:` and the first comma) says.
    private struct Header {
        var mimeType: String
        var charset: String?
        var isBase64: Bool
    }

    private static func decode(bytes: UnsafeBufferPointer<UInt8>) -> Result<Decoded, Failure> {
        // "data:" compared without case.
        guard bytes.count >= 5, lowercase(bytes[0]) == UInt8(ascii: "d"), lowercase(bytes[1]) == UInt8(ascii: "a"),
              lowercase(bytes[2]) == UInt8(ascii: "t"), lowercase(bytes[3]) == UInt8(ascii: "a"),
              bytes[4] == UInt8(ascii: ":") else {
            return .failure(.notADataURL)
        }
        let start = 5
        // The fragment (from the first "#", RFC 3986 §3.5) is not part of the URL's data or header.
        let end = firstIndex(of: UInt8(ascii: "#"), in: bytes, start..<bytes.count) ?? bytes.count
        guard let comma = firstIndex(of: UInt8(ascii: ","), in: bytes, start..<end) else { return .failure(.missingComma) }
        let rawHeader = UnsafeBufferPointer(rebasing: bytes[start..<comma])
        let parsed: Result<Header, Failure>
        // A header with escapes is parsed once they are decoded (as written when they are malformed).
        if firstIndex(of: UInt8(ascii: "%"), in: rawHeader, 0..<rawHeader.count) != nil, let decoded = percentDecode(rawHeader) {
            parsed = decoded.withUnsafeBufferPointer { parseHeader($0) }
        } else {
            parsed = parseHeader(rawHeader)
        }
        let header: Header
        switch parsed {
        case .success(let value): header = value
        case .failure(let failure): return .failure(failure)
        }

        let payload = UnsafeBufferPointer(rebasing: bytes[(comma + 1)..<end])
        let data: Data?
        if firstIndex(of: UInt8(ascii: "%"), in: payload, 0..<payload.count) == nil {
            data = header.isBase64 ? base64Decode(payload) : Data(payload)
        } else {
            guard let raw = percentDecode(payload) else { return .failure(.invalidPercentEscape) }
            data = header.isBase64 ? raw.withUnsafeBufferPointer { base64Decode($0) } : Data(raw)
        }
        guard let data else { return .failure(.invalidBase64) }
        return .success(Decoded(mimeType: header.mimeType, textEncodingName: header.charset, data: data))
    }

    /// Parses `[<type>/<subtype>] *(";" <name>=<value>) [";base64"]`: parameters are the parts
    /// between semicolons with spaces and tabs trimmed; RFC 2397's marker is `base64` as the last of
    /// at least two parts (a bare `base64` is a (bad) media type); the last `charset` wins.
    private static func parseHeader(_ header: UnsafeBufferPointer<UInt8>) -> Result<Header, Failure> {
        let semicolon = UInt8(ascii: ";")
        let count = header.count
        let firstSemicolon = firstIndex(of: semicolon, in: header, 0..<count)
        var isBase64 = false
        // Where the parameters end: before the base64 marker when there is one.
        var parametersEnd = count
        if firstSemicolon != nil, let lastSemicolon = lastIndex(of: semicolon, in: header, 0..<count),
           equalsIgnoringCase(header, trimmed(header, (lastSemicolon + 1)..<count), "base64") {
            isBase64 = true
            parametersEnd = lastSemicolon
        }
        let type = trimmed(header, 0..<(firstSemicolon ?? count))
        var mimeType = "text/plain"
        if !type.isEmpty {
            guard isMediaType(header, type) else {
                return .failure(.invalidMediaType(String(decoding: UnsafeBufferPointer(rebasing: header[type]), as: UTF8.self)))
            }
            // A token is ASCII: lowercased byte by byte straight into the string's storage.
            mimeType = String(unsafeUninitializedCapacity: type.count) { buffer in
                for (offset, index) in type.enumerated() { buffer[offset] = lowercase(header[index]) }
                return type.count
            }
        }
        var charset: String?
        if let firstSemicolon, parametersEnd > firstSemicolon {
            var partStart = firstSemicolon + 1
            while true {
                let partEnd = firstIndex(of: semicolon, in: header, partStart..<parametersEnd) ?? parametersEnd
                if let value = charsetValue(header, trimmed(header, partStart..<partEnd)) { charset = value }
                if partEnd == parametersEnd { break }
                partStart = partEnd + 1
            }
        }
        if type.isEmpty && charset == nil { charset = "US-ASCII" }
        return .success(Header(mimeType: mimeType, charset: charset, isBase64: isBase64))
    }

    /// The value of `part` when it is a non-empty `charset=<value>` parameter (quotes removed).
    private static func charsetValue(_ header: UnsafeBufferPointer<UInt8>, _ part: Range<Int>) -> String? {
        guard !part.isEmpty, let equals = firstIndex(of: UInt8(ascii: "="), in: header, part),
              equalsIgnoringCase(header, trimmed(header, part.lowerBound..<equals), "charset") else { return nil }
        var value = trimmed(header, (equals + 1)..<part.upperBound)
        if value.count >= 2, header[value.lowerBound] == UInt8(ascii: "\""), header[value.upperBound - 1] == UInt8(ascii: "\"") {
            value = (value.lowerBound + 1)..<(value.upperBound - 1)
        }
        return value.isEmpty ? nil : String(decoding: UnsafeBufferPointer(rebasing: header[value]), as: UTF8.self)
    }

    /// `type/subtype`: exactly one slash, with a non-empty token (RFC 2045) on each side.
    private static func isMediaType(_ header: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        guard let slash = firstIndex(of: UInt8(ascii: "/"), in: header, range),
              slash > range.lowerBound, slash + 1 < range.upperBound else { return false }
        for index in range where index != slash {
            guard isTokenByte(header[index]) else { return false }
        }
        return true
    }

    private static func lowercase(_ byte: UInt8) -> UInt8 {
        (byte >= 0x41 && byte <= 0x5A) ? byte + 0x20 : byte
    }

    /// A byte RFC 2045 allows in a token: printable ASCII other than its separators.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        guard byte > 0x20 && byte < 0x7F else { return false }
        switch byte {
        case UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "@"),
             UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: ":"), UInt8(ascii: "\\"), UInt8(ascii: "\""),
             UInt8(ascii: "/"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "?"), UInt8(ascii: "="),
             UInt8(ascii: "{"), UInt8(ascii: "}"):
            return false
        default:
            return true
        }
    }

    private static func firstIndex(of byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
        var index = range.lowerBound
        while index < range.upperBound {
            if bytes[index] == byte { return index }
            index += 1
        }
        return nil
    }

    private static func lastIndex(of byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
        var index = range.upperBound
        while index > range.lowerBound {
            index -= 1
            if bytes[index] == byte { return index }
        }
        return nil
    }

    /// `range` without the spaces and tabs at either end.
    private static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper, bytes[lower] == 0x20 || bytes[lower] == 0x09 { lower += 1 }
        while upper > lower, bytes[upper - 1] == 0x20 || bytes[upper - 1] == 0x09 { upper -= 1 }
        return lower..<upper
    }

    private static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ word: StaticString) -> Bool {
        guard range.count == word.utf8CodeUnitCount else { return false }
        return word.withUTF8Buffer { expected in
            for offset in 0..<range.count where lowercase(bytes[range.lowerBound + offset]) != expected[offset] {
                return false
            }
            return true
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: return byte - 0x30
        case 0x41...0x46: return byte - 0x41 + 10
        case 0x61...0x66: return byte - 0x61 + 10
        default: return nil
        }
    }

    /// Percent-decodes in one pass; `nil` for a `%` not followed by two hex digits.
    private static func percentDecode(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var output = [UInt8]()
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count,
                      let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) else { return nil }
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(byte)
                index += 1
            }
        }
        return output
    }

    private static func isBase64WhiteSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0C
    }

    /// Decodes base64, ignoring ASCII white space and accepting missing padding.
    private static func base64Decode(_ input: UnsafeBufferPointer<UInt8>) -> Data? {
        var hasWhiteSpace = false
        for byte in input where isBase64WhiteSpace(byte) {
            hasWhiteSpace = true
            break
        }
        if !hasWhiteSpace && input.count % 4 == 0 {
            // The common case: Foundation's decoder reads the bytes as they are.
            return Data(base64Encoded: Data(input))
        }
        var cleaned = [UInt8]()
        cleaned.reserveCapacity(input.count + 3)
        for byte in input where !isBase64WhiteSpace(byte) {
            cleaned.append(byte)
        }
        let remainder = cleaned.count % 4
        if remainder == 1 { return nil }
        if remainder > 0 { cleaned.append(contentsOf: repeatElement(UInt8(ascii: "="), count: 4 - remainder)) }
        return Data(base64Encoded: Data(cleaned))
    }
}
