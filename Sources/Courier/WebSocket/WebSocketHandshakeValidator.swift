import Foundation

/// Checks the server's answer to the opening handshake (RFC 6455 §4.1, the client's part of
/// §4.2.2). Any failure is `badServerResponse` with `failingURL` set and a description naming
/// what was wrong; the task keeps the `HTTPURLResponse` as its `response` either way.
enum WebSocketHandshakeValidator {
    /// Checks `response` to a handshake sent with `key` offering `offeredProtocols`, and returns
    /// the subprotocol the server selected (`nil` when it selected none).
    ///
    /// In order: the status is 101; `Upgrade` lists `websocket` and `Connection` lists `Upgrade`
    /// (tokens compared without case, other tokens allowed); `Sec-WebSocket-Accept` is exactly the
    /// value for `key`; no `Sec-WebSocket-Extensions` (Courier offers none); a
    /// `Sec-WebSocket-Protocol`, when present, is one single protocol among those offered (compared
    /// exactly: subprotocol names are case-sensitive).
    static func validate(_ response: HTTPURLResponse, key: String, offeredProtocols: [String]) throws(URLError) -> String? {
        let url = response.url
        func refuse(_ problem: String) -> URLError {
            URLError(.badServerResponse, url: url, description: "The WebSocket handshake failed: \(problem).")
        }
        guard response.statusCode == 101 else {
            throw refuse("the server answered with status \(response.statusCode) instead of 101 Switching Protocols")
        }
        let upgrade = response.value(forHTTPHeaderField: "Upgrade")
        guard WebSocketHeaderTokens.list(upgrade, contains: "websocket") else {
            throw refuse("the response's Upgrade field is \(describe(upgrade)), not websocket")
        }
        let connection = response.value(forHTTPHeaderField: "Connection")
        guard WebSocketHeaderTokens.list(connection, contains: "upgrade") else {
            throw refuse("the response's Connection field is \(describe(connection)), not Upgrade")
        }
        let accept = response.value(forHTTPHeaderField: "Sec-WebSocket-Accept")?.trimmingCharacters(in: .whitespaces)
        guard accept == WebSocketHandshakeKey.acceptValue(for: key) else {
            throw refuse("the response's Sec-WebSocket-Accept is \(describe(accept)), which does not match the key sent")
        }
        let extensions = WebSocketHeaderTokens.elements(of: response.value(forHTTPHeaderField: "Sec-WebSocket-Extensions"))
        guard extensions.isEmpty else {
            throw refuse("the server selected the extension \(extensions.joined(separator: ", ")), which was not offered")
        }
        let selected = WebSocketHeaderTokens.elements(of: response.value(forHTTPHeaderField: "Sec-WebSocket-Protocol"))
        guard let chosen = selected.first else { return nil }
        guard selected.count == 1 else {
            throw refuse("the server selected several subprotocols (\(selected.joined(separator: ", ")))")
        }
        guard offeredProtocols.contains(chosen) else {
            throw refuse("the server selected the subprotocol \(chosen.debugDescription), which was not offered")
        }
        return chosen
    }

    private static func describe(_ value: String?) -> String {
        value.map { $0.debugDescription } ?? "missing"
    }
}
