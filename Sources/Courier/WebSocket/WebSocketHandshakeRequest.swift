import Foundation

/// What Courier adds to the request of the opening handshake (RFC 6455 §4.1): the HTTP URL the
/// request goes to and the upgrade's header fields.
enum WebSocketHandshakeRequest {
    /// The URL the handshake's HTTP/1.1 request is sent to: `ws` becomes `http`, `wss` becomes
    /// `https` (in any case), `http` and `https` stay; any other scheme gives `nil`.
    static func httpURL(for url: URL) -> URL? {
        let scheme: String
        switch url.scheme?.lowercased() {
        case "ws", "http": scheme = "http"
        case "wss", "https": scheme = "https"
        default: return nil
        }
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return nil }
        components.scheme = scheme
        return components.url
    }

    /// The subprotocols a request offers in its own `Sec-WebSocket-Protocol` field (an app may set
    /// it on the `URLRequest` of `webSocketTask(with:)` instead of passing `protocols`).
    static func offeredProtocols(inHeaderValue value: String?) -> [String] {
        WebSocketHeaderTokens.elements(of: value)
    }

    /// The upgrade's header fields, in the order they are sent: `Upgrade: websocket`,
    /// `Connection: Upgrade`, `Sec-WebSocket-Key`, `Sec-WebSocket-Version: 13`, and
    /// `Sec-WebSocket-Protocol` listing `protocols` when there are any. They replace fields of the
    /// same names the app's request has. No `Sec-WebSocket-Extensions`: Courier offers none.
    ///
    /// - Throws: `badURL` (with `url`) when a protocol name is not a token or is offered twice —
    ///   RFC 6455 requires unique tokens, and anything else could break the request's head, so
    ///   the request is not sent (as for any header field Courier refuses to send).
    static func headerFields(key: String, protocols: [String], url: URL) throws(URLError) -> [(name: String, value: String)] {
        var seen = Set<String>()
        for name in protocols {
            guard WebSocketHeaderTokens.isToken(name) else {
                throw URLError(.badURL, url: url,
                               description: "The WebSocket subprotocol \(name.debugDescription) is not a valid token; the request was not sent.")
            }
            guard seen.insert(name).inserted else {
                throw URLError(.badURL, url: url,
                               description: "The WebSocket subprotocol \(name.debugDescription) is offered twice; the request was not sent.")
            }
        }
        var fields: [(name: String, value: String)] = [
            ("Upgrade", "websocket"),
            ("Connection", "Upgrade"),
            ("Sec-WebSocket-Key", key),
            ("Sec-WebSocket-Version", "13"),
        ]
        if !protocols.isEmpty {
            fields.append(("Sec-WebSocket-Protocol", protocols.joined(separator: ", ")))
        }
        return fields
    }
}
