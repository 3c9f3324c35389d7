#if COURIER_FUZZ
@testable import Courier
import Foundation

/// `DataURLDecoder`: the input as a URL (and with `data:` put in front). A decoded body is never
/// longer than the URL, and re-encoding it (base64, and percent-escaped) decodes to the same bytes
/// and media type.
enum DataURLHarness {
    static func run(_ input: Data) {
        let text = String(decoding: input, as: UTF8.self)
        check(text)
        check("data:" + text)
    }

    private static func check(_ url: String) {
        guard case .success(let decoded) = DataURLDecoder.decode(url) else { return }
        fuzzCheck(decoded.data.count <= url.utf8.count, "decoded \(decoded.data.count) bytes from \(url.utf8.count)")
        let parts = decoded.mimeType.split(separator: "/", omittingEmptySubsequences: false)
        fuzzCheck(parts.count == 2 && decoded.mimeType == decoded.mimeType.lowercased(),
                  "media type \(decoded.mimeType)")

        // A media type may hold "#" (a token character) and "%" once its escapes are decoded.
        let mimeType = decoded.mimeType.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "#", with: "%23")
        let base64 = "data:\(mimeType);base64,\(decoded.data.base64EncodedString())"
        let percent = "data:\(mimeType)," + decoded.data.map { String(format: "%%%02X", $0) }.joined()
        for encoded in [base64, percent] {
            guard case .success(let again) = DataURLDecoder.decode(encoded) else {
                fuzzCheck(false, "re-encoded URL does not decode: \(encoded.prefix(200))")
                return
            }
            fuzzCheck(again.data == decoded.data && again.mimeType == decoded.mimeType,
                      "round trip changed the body or type: \(encoded.prefix(200))")
        }
    }
}
#endif
