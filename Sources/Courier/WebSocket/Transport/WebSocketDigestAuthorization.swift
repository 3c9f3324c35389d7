internal import COpenSSL
import Foundation

/// `Authorization: Digest …` (RFC 7616) for the WebSocket handshake, which Courier writes itself:
/// libcurl only opens the connection (``WebSocketConnector``), so it cannot answer a server's
/// Digest challenge as it does for a data task.
///
/// Answers one challenge of the `WWW-Authenticate` value: algorithm MD5, MD5-sess, SHA-256 or
/// SHA-256-sess, with `qop=auth` when the server offers it (RFC 2069's form without qop when it
/// offers none), `opaque` returned as given, the nonce count 1 and a fresh client nonce — each
/// answer goes on a new connection with the challenge's nonce.
enum WebSocketDigestAuthorization {
    /// The field value answering the Digest challenge in `challenge` (a `WWW-Authenticate` value,
    /// possibly listing other schemes too) for `method` and `uri` (the request target); `nil` when
    /// there is no Digest challenge with a nonce, or its algorithm or qop is one Courier cannot use.
    static func value(challenge: String, user: String, password: String, method: String, uri: String,
                      clientNonce: String = makeClientNonce()) -> String? {
        guard let parameters = digestParameters(in: challenge), let nonce = parameters["nonce"] else { return nil }
        let algorithm = parameters["algorithm"] ?? "MD5"
        let session = algorithm.uppercased().hasSuffix("-SESS")
        let digest: OpaquePointer?
        switch algorithm.uppercased() {
        case "MD5", "MD5-SESS": digest = EVP_md5()
        case "SHA-256", "SHA-256-SESS": digest = EVP_sha256()
        default: return nil
        }
        guard let digest else { return nil }
        let qops = (parameters["qop"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard qops.isEmpty || qops.contains("auth") else { return nil }
        let realm = parameters["realm"] ?? ""
        let count = "00000001"
        var secret = hex(digest, "\(user):\(realm):\(password)")
        if session { secret = hex(digest, "\(secret):\(nonce):\(clientNonce)") }
        let target = hex(digest, "\(method):\(uri)")
        let response = qops.isEmpty
            ? hex(digest, "\(secret):\(nonce):\(target)")
            : hex(digest, "\(secret):\(nonce):\(count):\(clientNonce):auth:\(target)")
        var fields = ["username=\(quoted(user))", "realm=\(quoted(realm))", "nonce=\(quoted(nonce))", "uri=\(quoted(uri))",
                      "algorithm=\(algorithm)", "response=\"\(response)\""]
        if !qops.isEmpty { fields += ["qop=auth", "nc=\(count)", "cnonce=\(quoted(clientNonce))"] }
        if let opaque = parameters["opaque"] { fields.append("opaque=\(quoted(opaque))") }
        return "Digest " + fields.joined(separator: ", ")
    }

    /// 16 random bytes as hex.
    static func makeClientNonce() -> String {
        var generator = WebSocketRandom()
        return (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    /// The parameters of the first Digest challenge in `value` (names lowercased, quoted strings
    /// unquoted), or `nil` when there is none.
    static func digestParameters(in value: String) -> [String: String]? {
        var scanner = ChallengeScanner(Array(value.utf8))
        var inDigest = false
        var parameters: [String: String] = [:]
        while let item = scanner.next() {
            switch item {
            case .scheme(let scheme):
                if inDigest { return parameters }
                inDigest = scheme.lowercased() == "digest"
            case .parameter(let name, let parameterValue):
                if inDigest { parameters[name.lowercased()] = parameterValue }
            }
        }
        return inDigest ? parameters : nil
    }

    /// A quoted-string, with `"` and `\` escaped.
    private static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// The lowercase hex digest of `text`'s UTF-8 with `digest` (an OpenSSL `EVP_MD`).
    private static func hex(_ digest: OpaquePointer, _ text: String) -> String {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let bytes = Array(text.utf8)
        let succeeded = bytes.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &output, &length, digest, nil) == 1
        }
        guard succeeded else { return "" }
        return output.prefix(Int(length)).map { String(format: "%02x", $0) }.joined()
    }
}

/// Splits a `WWW-Authenticate` value into schemes and their `name=value` parameters, in order.
private struct ChallengeScanner {
    enum Item {
        case scheme(String)
        case parameter(String, String)
    }

    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func next() -> Item? {
        skip { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\t") }
        guard index < bytes.count else { return nil }
        let word = token()
        guard !word.isEmpty else {
            index += 1
            return next()
        }
        skip { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else { return .scheme(word) }
        index += 1
        skip { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        return .parameter(word, quotedOrToken())
    }

    private mutating func skip(while matches: (UInt8) -> Bool) {
        while index < bytes.count, matches(bytes[index]) { index += 1 }
    }

    private mutating func token() -> String {
        let start = index
        skip { !" \t,=\"".utf8.contains($0) }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func quotedOrToken() -> String {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
            let start = index
            skip { $0 != UInt8(ascii: ",") && $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }
        index += 1
        var result: [UInt8] = []
        while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
            if bytes[index] == UInt8(ascii: "\\"), index + 1 < bytes.count { index += 1 }
            result.append(bytes[index])
            index += 1
        }
        index += 1
        return String(decoding: result, as: UTF8.self)
    }
}
