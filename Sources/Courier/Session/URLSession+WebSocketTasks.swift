import Foundation

// Making WebSocket tasks: the public factory methods (in URLSession.swift, since `open` members
// must be in the class body) come here.
extension URLSession {
    /// A registered WebSocket task for `request`, whose `Sec-WebSocket-Protocol` field offers
    /// `protocols` when there are any (replacing the request's own).
    func webSocketTask(_ request: URLRequest, protocols: [String]?) -> URLSessionWebSocketTask {
        var offered = request
        if let protocols, !protocols.isEmpty {
            offered.setValue(protocols.joined(separator: ", "), forHTTPHeaderField: "Sec-WebSocket-Protocol")
        }
        return register { identifier, refusal, context in
            URLSessionWebSocketTask(session: self, context: context, identifier: identifier, request: offered, creationFailure: refusal)
        }
    }
}
