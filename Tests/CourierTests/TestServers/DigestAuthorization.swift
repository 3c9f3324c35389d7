import Foundation

/// The parameters of an `Authorization: Digest …` field, and the check a server makes with them
/// (RFC 7616, MD5, `qop=auth`): used by ``FaultServer``'s Digest route.
struct DigestAuthorization: Sendable, Equatable {
    /// The auth-params, names lowercased, quoted strings unquoted.
    var parameters: [String: String]

    /// Parses `value`; `nil` unless it is a Digest authorization.
    init?(_ value: String) {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("digest ") else { return nil }
        parameters = Self.parameters(in: trimmed.dropFirst("digest ".count))
    }

    /// The response hash a client knowing `password` sends (RFC 7616 section 3.4.1, MD5, qop=auth):
    /// MD5(MD5(user:realm:password):nonce:nc:cnonce:auth:MD5(method:uri)).
    static func expectedResponse(user: String, realm: String, password: String, method: String, uri: String,
                                 nonce: String, nonceCount: String, clientNonce: String) -> String {
        let secret = TestMD5.hex("\(user):\(realm):\(password)")
        let request = TestMD5.hex("\(method):\(uri)")
        return TestMD5.hex("\(secret):\(nonce):\(nonceCount):\(clientNonce):auth:\(request)")
    }

    /// Whether this authorization proves knowledge of `password` for `method` and `target`, with a
    /// nonce the server issued: every field RFC 7616 requires with `qop=auth` present, `uri` equal
    /// to the request target, algorithm MD5, and the response hash right.
    func verifies(method: String, target: String, realm: String, user: String, password: String,
                  issued: (String) -> Bool) -> Bool {
        guard let username = parameters["username"], username == user,
              parameters["realm"] == realm,
              let nonce = parameters["nonce"], issued(nonce),
              let uri = parameters["uri"], uri == target,
              parameters["qop"] == "auth",
              (parameters["algorithm"] ?? "MD5").uppercased() == "MD5",
              let nonceCount = parameters["nc"], nonceCount.count == 8, UInt32(nonceCount, radix: 16) != nil,
              let clientNonce = parameters["cnonce"], !clientNonce.isEmpty,
              let response = parameters["response"] else { return false }
        let expected = Self.expectedResponse(user: user, realm: realm, password: password, method: method, uri: uri,
                                             nonce: nonce, nonceCount: nonceCount, clientNonce: clientNonce)
        return response.lowercased() == expected
    }

    /// `name=token` / `name="quoted \" string"` pairs separated by commas.
    private static func parameters(in text: Substring) -> [String: String] {
        var result: [String: String] = [:]
        var index = text.startIndex
        func skip(_ characters: String) {
            while index < text.endIndex, characters.contains(text[index]) { index = text.index(after: index) }
        }
        while index < text.endIndex {
            skip(" \t,")
            let nameStart = index
            while index < text.endIndex, !"= \t,".contains(text[index]) { index = text.index(after: index) }
            let name = text[nameStart..<index].lowercased()
            skip(" \t")
            guard index < text.endIndex, text[index] == "=" else { continue }
            index = text.index(after: index)
            skip(" \t")
            var value = ""
            if index < text.endIndex, text[index] == "\"" {
                index = text.index(after: index)
                while index < text.endIndex, text[index] != "\"" {
                    if text[index] == "\\" {
                        index = text.index(after: index)
                        if index == text.endIndex { break }
                    }
                    value.append(text[index])
                    index = text.index(after: index)
                }
                if index < text.endIndex { index = text.index(after: index) }
            } else {
                while index < text.endIndex, !", \t".contains(text[index]) {
                    value.append(text[index])
                    index = text.index(after: index)
                }
            }
            if !name.isEmpty { result[name] = value }
        }
        return result
    }
}
