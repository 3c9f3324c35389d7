import Foundation

/// NTLM's `Authorization` values for the WebSocket handshake, which Courier writes itself (libcurl
/// only opens the connection, ``WebSocketConnector``): `NTLM <NEGOTIATE>` for the first request on
/// a connection, and `NTLM <AUTHENTICATE>` answering the CHALLENGE the server's 401 carries in
/// `WWW-Authenticate: NTLM <token>`. The messages are ``NTLMNegotiateMessage``,
/// ``NTLMChallengeMessage`` and ``NTLMAuthenticateMessage``; the exchange on one connection is
/// ``WebSocketURLProtocol``'s.
enum WebSocketNTLMAuthorization {
    /// `Authorization: NTLM <NEGOTIATE>`, the same for every connection.
    static let negotiate = "NTLM " + Data(NTLMNegotiateMessage.bytes).base64EncodedString()

    /// The CHALLENGE token of `response`'s `WWW-Authenticate: NTLM <token>` (empty when the token is
    /// not base64, which makes it a malformed challenge); `nil` when the response offers NTLM
    /// without a token, or does not offer it.
    static func challengeToken(in response: HTTPURLResponse) -> [UInt8]? {
        guard let header = response.value(forHTTPHeaderField: "WWW-Authenticate") else { return nil }
        for offer in header.split(separator: ",") {
            let parts = offer.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "ntlm" else { continue }
            let token = parts[1].trimmingCharacters(in: .whitespaces)
            guard !token.isEmpty else { continue }
            return Data(base64Encoded: token).map { Array($0) } ?? []
        }
        return nil
    }

    /// `NTLM <AUTHENTICATE>` answering the CHALLENGE `token` with `credential`.
    /// - Parameters:
    ///   - clientChallenge: 8 bytes; fresh random ones by default.
    ///   - now: the current time (used when the challenge has no timestamp).
    static func answer(to token: [UInt8], credential: URLCredential, clientChallenge: [UInt8] = makeClientChallenge(),
                       now: Date = Date()) throws(NTLMFailure) -> String {
        guard let challenge = NTLMChallengeMessage(bytes: token) else { throw .malformedChallenge }
        let message = try NTLMAuthenticateMessage.bytes(answering: challenge, name: NTLMUserName(credential.user ?? ""),
                                                        password: credential.password ?? "", clientChallenge: clientChallenge,
                                                        now: NTLMv2Response.fileTime(secondsSince1970: now.timeIntervalSince1970))
        return "NTLM " + Data(message).base64EncodedString()
    }

    /// 8 bytes from the system's cryptographic random numbers.
    static func makeClientChallenge() -> [UInt8] {
        var generator = WebSocketRandom()
        return (0..<8).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }
}
