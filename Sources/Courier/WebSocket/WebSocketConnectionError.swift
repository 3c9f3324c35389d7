import Foundation

/// Why a WebSocket connection ended without a completed close handshake, or why an operation on
/// it failed, and the `URLError` a task reports for it.
///
/// The URL error codes follow FoundationNetworking (swift-corelibs-foundation), which reports a
/// frame it cannot accept or text that is not UTF-8 as `badServerResponse`, and fails sends,
/// receives and pings on a task that is closed or cancelled with `networkConnectionLost`. It has
/// no message-size check; Courier reports a message over `maximumMessageSize` as
/// `dataLengthExceedsMaximum` (Apple's platforms report POSIX `EMSGSIZE`, which no `URLError`
/// code names). The protocol error travels along as the `URLError`'s underlying error.
enum WebSocketConnectionError: Error, Equatable, Sendable {
    /// The peer broke RFC 6455; Courier sent a close frame with the error's code.
    case protocolViolation(WebSocketProtocolError)
    /// The transport closed before the close handshake completed (RFC 6455's 1006).
    case connectionLost
    /// Courier sent a close frame and the peer did not answer in time.
    case closeHandshakeTimedOut
    /// The operation came after the connection started closing (a send, a ping).
    case notConnected

    /// The error a task reports, with `url` as its failing URL.
    func urlError(url: URL?) -> URLError {
        switch self {
        case .protocolViolation(let violation):
            let code: URLError.Code = violation.closeCode == .messageTooBig ? .dataLengthExceedsMaximum : .badServerResponse
            return URLError(code, url: url, description: "The WebSocket connection failed: \(violation.reason).",
                            underlying: violation)
        case .connectionLost:
            return URLError(.networkConnectionLost, url: url,
                            description: "The WebSocket connection was lost before it was closed.")
        case .closeHandshakeTimedOut:
            return URLError(.timedOut, url: url, description: "The WebSocket server did not answer the close frame in time.")
        case .notConnected:
            return URLError(.networkConnectionLost, url: url, description: "The WebSocket connection is closed.")
        }
    }
}
