import Foundation

/// Checks a request's method and header fields before they are handed to libcurl, which writes them
/// into the request head as they are.
///
/// A value holding CR or LF would end its line early and start another: header (or request)
/// injection. Such a request is refused as a whole — the task fails with `badURL` naming the field —
/// rather than sent with the field dropped or rewritten, which could quietly lose a credential or
/// change what the server is asked. Refused: a method that is not an RFC 9110 token, a field name
/// that is not a token, a value holding CR, LF or NUL — the app's fields and the ones Courier adds
/// from its stores or from resume data alike.
enum HTTPRequestHeadValidation {
    /// Throws `badURL` (with `url`) when `method` or a field of `fields` cannot be sent safely.
    static func validate(method: String, fields: [String: String], url: URL) throws(URLError) {
        guard isToken(method) else {
            throw URLError(.badURL, url: url, description: "The HTTP method \(quoted(method)) is not a valid token; the request was not sent.")
        }
        for (name, value) in fields {
            guard isToken(name) else {
                throw URLError(.badURL, url: url, description: "The header field name \(quoted(name)) is not a valid token; the request was not sent.")
            }
            guard !breaksLine(value) else {
                throw URLError(.badURL, url: url,
                               description: "The value of the header field \(name) contains a line break or NUL; the request was not sent.")
            }
        }
    }

    /// Throws `badURL` when one of the header lines Courier adds itself (stored cookies, the resume
    /// validator) holds CR, LF or NUL.
    static func validate(addedLines lines: ArraySlice<String>, url: URL) throws(URLError) {
        for line in lines where breaksLine(line) {
            let name = line.prefix { $0 != ":" && $0 != ";" }
            throw URLError(.badURL, url: url, description: "The \(name) header field Courier adds contains a line break or NUL; the request was not sent.")
        }
    }

    /// Whether `text` holds CR, LF or NUL (on its contiguous UTF-8, one byte compare each).
    private static func breaksLine(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in bytes.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 } }
    }

    /// Whether `text` is an RFC 9110 token: letters, digits and `!#$%&'*+-.^_`|~`.
    private static func isToken(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            !bytes.isEmpty && bytes.allSatisfy { byte in
                switch byte {
                case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
                case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
                     UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
                     UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"): true
                default: false
                }
            }
        }
    }

    /// `text` in quotes with control characters escaped, for an error message.
    private static func quoted(_ text: String) -> String {
        "“" + text.unicodeScalars.map { $0.properties.generalCategory == .control ? $0.escaped(asASCII: true) : String($0) }.joined() + "”"
    }
}
