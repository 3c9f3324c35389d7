import Foundation

/// Decodes `data:` URLs (RFC 2397): `data:[<media type>][;base64],<data>`.
///
/// Works on the URL's UTF-8 bytes in one pass, so multi-megabyte URLs decode in linear time.
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

    private static func decode(bytes: UnsafeBufferPointer<UInt8>) -> Result<Decoded, Failure> {
        // "data:" compared without case.
        let prefix: [UInt8] = Array("data:".utf8)
        guard bytes.count >= prefix.count,
              zip(bytes.prefix(prefix.count), prefix).allSatisfy({ lowercase($0) == $1 }) else {
            return .failure(.notADataURL)
        }
        let start = prefix.count
        // The fragment (from the first "#", RFC 3986 §3.5) is not part of the URL's data or header.
        let end = bytes[start...].firstIndex(of: UInt8(ascii: "#")) ?? bytes.count
        guard let comma = bytes[start..<end].firstIndex(of: UInt8(ascii: ",")) else { return .failure(.missingComma) }
        let payload = UnsafeBufferPointer(rebasing: bytes[(comma + 1)..<end])
        // The header is parsed on bytes: no Foundation string work on the hot path.
        var header = Array(UnsafeBufferPointer(rebasing: bytes[start..<comma]))
        if header.contains(UInt8(ascii: "%")), let decoded = header.withUnsafeBufferPointer({ percentDecode($0) }) {
            header = [UInt8](decoded)
        }
        var parameters = header.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false).map(trimmed)
        var isBase64 = false
        // RFC 2397: the marker is ";base64" right before the comma; a bare "base64" is a (bad) media type.
        if parameters.count > 1, let last = parameters.last, equalsIgnoringCase(last, "base64") {
            isBase64 = true
            parameters.removeLast()
        }
        let typeBytes = parameters.first ?? []
        var mimeType = "text/plain"
        var charset: String?
        if !typeBytes.isEmpty {
            let parts = typeBytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
            guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(isTokenByte) }) else {
                return .failure(.invalidMediaType(String(decoding: typeBytes, as: UTF8.self)))
            }
            mimeType = String(decoding: typeBytes.map(lowercase), as: UTF8.self)
        }
        for parameter in parameters.dropFirst() where !parameter.isEmpty {
            guard let equals = parameter.firstIndex(of: UInt8(ascii: "=")) else { continue }
            guard equalsIgnoringCase(trimmed(parameter[..<equals]), "charset") else { continue }
            var value = trimmed(parameter[(equals + 1)...])
            if value.count >= 2, value.first == UInt8(ascii: "\""), value.last == UInt8(ascii: "\"") {
                value = Array(value.dropFirst().dropLast())
            }
            if !value.isEmpty { charset = String(decoding: value, as: UTF8.self) }
        }
        if typeBytes.isEmpty && charset == nil { charset = "US-ASCII" }

        guard let raw = percentDecode(payload) else { return .failure(.invalidPercentEscape) }
        let data: Data
        if isBase64 {
            guard let decoded = base64Decode(raw) else { return .failure(.invalidBase64) }
            data = decoded
        } else {
            data = raw
        }
        return .success(Decoded(mimeType: mimeType, textEncodingName: charset, data: data))
    }

    private static func lowercase(_ byte: UInt8) -> UInt8 {
        (byte >= 0x41 && byte <= 0x5A) ? byte + 0x20 : byte
    }

    /// Separators RFC 2045 excludes from tokens.
    private static let separators: Set<UInt8> = Set("()<>@,;:\\\"/[]?={}".utf8)

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte < 0x7F && !separators.contains(byte)
    }

    private static func trimmed<C: Collection>(_ bytes: C) -> [UInt8] where C.Element == UInt8 {
        var slice = Array(bytes)[...]
        while let first = slice.first, first == 0x20 || first == 0x09 { slice = slice.dropFirst() }
        while let last = slice.last, last == 0x20 || last == 0x09 { slice = slice.dropLast() }
        return Array(slice)
    }

    private static func equalsIgnoringCase(_ bytes: [UInt8], _ word: StaticString) -> Bool {
        guard bytes.count == word.utf8CodeUnitCount else { return false }
        return word.withUTF8Buffer { expected in zip(bytes, expected).allSatisfy { lowercase($0) == $1 } }
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
    private static func percentDecode(_ bytes: UnsafeBufferPointer<UInt8>) -> Data? {
        guard bytes.contains(UInt8(ascii: "%")) else { return Data(bytes) }
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
        return Data(output)
    }

    /// Decodes base64, ignoring ASCII white space and accepting missing padding.
    private static func base64Decode(_ input: Data) -> Data? {
        var cleaned = [UInt8]()
        cleaned.reserveCapacity(input.count + 3)
        for byte in input where !(byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0C) {
            cleaned.append(byte)
        }
        let remainder = cleaned.count % 4
        if remainder == 1 { return nil }
        if remainder > 0 { cleaned.append(contentsOf: repeatElement(UInt8(ascii: "="), count: 4 - remainder)) }
        return Data(base64Encoded: Data(cleaned))
    }
}
