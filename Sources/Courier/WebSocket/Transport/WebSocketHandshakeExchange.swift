import Foundation

/// The opening handshake's HTTP/1.1 exchange as bytes: the request Courier writes on the connected
/// socket, and the reading of the server's answer up to the end of its head.
///
/// The request is the app's, as for a data task: its header fields (the session's
/// `httpAdditionalHeaders` are already in it), a `User-Agent` when it has none, the session's
/// stored cookies when it sends no `Cookie` of its own, Basic credentials from the URL's user info
/// or the credential storage when it sends no `Authorization` of its own, and the upgrade's fields
/// (``WebSocketHandshakeRequest/headerFields(key:protocols:url:)``), which replace fields of the
/// same names. After a 401 the `Authorization` is one Courier writes (``authorization(for:method:challenge:httpURL:)``):
/// Basic, Digest, or NTLM's NEGOTIATE and then, on the same connection, its AUTHENTICATE
/// (``WebSocketNTLMAuthorization``; ``WebSocketURLProtocol`` runs that exchange).
enum WebSocketHandshakeExchange {
    /// The longest response head read before the handshake fails.
    static let maximumHeadLength = 64 * 1024

    /// The request head for `request` (a ws/wss or http/https URL), sent to `httpURL`'s server.
    /// - Parameters:
    ///   - authorization: an `Authorization` value to send when the request has none (a stored
    ///     credential after a 401).
    /// - Throws: `badURL` when a field cannot be sent or a subprotocol is not a token.
    static func requestHead(for request: URLRequest, httpURL: URL, key: String, authorization: String?,
                            environment: HandlerEnvironment) throws(URLError) -> Data {
        guard let host = httpURL.host, !host.isEmpty else {
            throw URLError(.badURL, url: request.url, description: "The WebSocket URL has no host.")
        }
        let protocols = WebSocketHandshakeRequest.offeredProtocols(inHeaderValue: request.value(forHTTPHeaderField: "Sec-WebSocket-Protocol"))
        let upgrade = try WebSocketHandshakeRequest.headerFields(key: key, protocols: protocols, url: request.url ?? httpURL)
        let replaced = Set(upgrade.map { $0.name.lowercased() } + ["host", "content-length", "transfer-encoding"])
        var fields = (request.allHTTPHeaderFields ?? [:]).filter { !replaced.contains($0.key.lowercased()) }
        try HTTPRequestHeadValidation.validate(method: "GET", fields: fields, url: request.url ?? httpURL)
        let names = Set(fields.keys.map { $0.lowercased() })
        if !names.contains("user-agent") { fields["User-Agent"] = HTTPTransferConfiguration.defaultUserAgent }
        if !names.contains("cookie"), let cookie = HTTPCookieHandling.cookieHeader(for: request, environment: environment) {
            fields["Cookie"] = cookie
        }
        if !names.contains("authorization"), let authorization = authorization ?? userInfoAuthorization(of: request.url) {
            fields["Authorization"] = authorization
        }
        var lines = ["GET \(requestTarget(of: httpURL)) HTTP/1.1", "Host: \(hostField(host: host, url: httpURL))"]
        lines += upgrade.map { "\($0.name): \($0.value)" }
        lines += fields.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        try HTTPRequestHeadValidation.validate(addedLines: ArraySlice(lines.dropFirst()), url: request.url ?? httpURL)
        return Data((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }

    /// `Host`: the host (bracketed when it is an IPv6 literal) and the port unless it is the scheme's default.
    private static func hostField(host: String, url: URL) -> String {
        let literal = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        let secure = url.scheme?.lowercased() == "https"
        guard let port = url.port, port != (secure ? 443 : 80) else { return literal }
        return "\(literal):\(port)"
    }

    /// Basic credentials from the URL's user info, as a data task sends them.
    private static func userInfoAuthorization(of url: URL?) -> String? {
        guard let url, let user = url.user(percentEncoded: false), !user.isEmpty else { return nil }
        return basicAuthorization(user: user, password: url.password(percentEncoded: false) ?? "")
    }

    /// An `Authorization` value for Basic authentication.
    static func basicAuthorization(user: String, password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    /// The authentication methods a handshake can answer a 401 with: those whose `Authorization`
    /// Courier writes itself.
    static let serverAuthenticationMethods: Set<String> = [
        NSURLAuthenticationMethodHTTPBasic, NSURLAuthenticationMethodHTTPDigest,
        NSURLAuthenticationMethodNTLM, NSURLAuthenticationMethodNegotiate,
    ]

    /// The `Authorization` value that answers a 401 with `credential` for `method` (Basic, Digest
    /// for the challenge in `challenge`, the 401's `WWW-Authenticate`, NTLM's first message, whose
    /// exchange ``WebSocketURLProtocol`` continues on the connection, or Negotiate from the ambient
    /// Kerberos ticket cache, as libcurl does: the credential only says to answer); `nil` when it
    /// cannot be made.
    /// - Throws: what ``WebSocketNegotiateAuthorization`` throws when GSS-API makes no token
    ///   (`url`: the task's URL, the error's failing URL).
    static func authorization(for credential: URLCredential, method: String, challenge: String?, httpURL: URL,
                              url: URL? = nil) throws(URLError) -> String? {
        if method == NSURLAuthenticationMethodNegotiate {
            return try WebSocketNegotiateAuthorization.value(for: httpURL, url: url ?? httpURL)
        }
        guard let user = credential.user else { return nil }
        let password = credential.password ?? ""
        switch method {
        case NSURLAuthenticationMethodHTTPBasic:
            return basicAuthorization(user: user, password: password)
        case NSURLAuthenticationMethodHTTPDigest:
            guard let challenge else { return nil }
            return WebSocketDigestAuthorization.value(challenge: challenge, user: user, password: password, method: "GET",
                                                      uri: requestTarget(of: httpURL))
        case NSURLAuthenticationMethodNTLM:
            return WebSocketNTLMAuthorization.negotiate
        default:
            return nil
        }
    }

    /// The request line's target: the path (`/` when empty) and the query, percent-encoded.
    static func requestTarget(of httpURL: URL) -> String {
        guard let components = URLComponents(url: httpURL, resolvingAgainstBaseURL: true) else {
            return httpURL.path.isEmpty ? "/" : httpURL.path
        }
        var target = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { target += "?" + query }
        return target
    }

    /// Reads the response head from the bytes that arrive, in any split.
    struct ResponseReader {
        private var bytes = Data()

        /// What the bytes so far make.
        enum Outcome {
            case needMore
            /// The head, and the bytes after it (the first frames).
            case head(HTTPURLResponse, rest: Data)
            case malformed(String)
        }

        /// Adds `chunk` and says whether the head is complete.
        mutating func append(_ chunk: UnsafeRawBufferPointer, url: URL) -> Outcome {
            let searchFrom = max(0, bytes.count - 3)
            bytes.append(contentsOf: chunk)
            guard let end = bytes[(bytes.startIndex + searchFrom)...].firstRange(of: Data([13, 10, 13, 10])) else {
                return bytes.count > WebSocketHandshakeExchange.maximumHeadLength
                    ? .malformed("the response head was longer than \(WebSocketHandshakeExchange.maximumHeadLength) bytes") : .needMore
            }
            let head = bytes[..<end.lowerBound]
            let rest = Data(bytes[end.upperBound...])
            guard let response = Self.parse(head, url: url) else {
                return .malformed("the response's status line or a header field could not be read")
            }
            return .head(response, rest: rest)
        }

        private static func parse(_ head: Data, url: URL) -> HTTPURLResponse? {
            let text = String(decoding: head, as: UTF8.self)
            var lines = text.components(separatedBy: "\r\n")
            guard !lines.isEmpty else { return nil }
            let statusLine = lines.removeFirst()
            let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
            guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let status = Int(parts[1]), (100...999).contains(status) else { return nil }
            var fields = HTTPHeaderFields()
            for line in lines where !line.isEmpty {
                guard let colon = line.firstIndex(of: ":") else { return nil }
                let name = line[..<colon].trimmingCharacters(in: .whitespaces)
                guard !name.isEmpty else { return nil }
                fields.add(line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces), for: name)
            }
            return HTTPURLResponse(url: url, statusCode: status, httpVersion: String(parts[0]), fields: fields)
        }
    }
}
