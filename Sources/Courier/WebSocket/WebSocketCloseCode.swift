import Foundation

/// Why a WebSocket connection closed: the status code of RFC 6455 §7.4, as
/// `URLSessionWebSocketTask.CloseCode`.
///
/// Shaped exactly like FoundationNetworking's `URLSessionWebSocketTask.CloseCode`
/// (`public enum CloseCode : Int, Sendable` with these cases, raw values and order), so that the
/// task can later declare it as its nested public type and keep this name as an internal
/// typealias: `typealias WebSocketCloseCode = URLSessionWebSocketTask.CloseCode`.
enum WebSocketCloseCode: Int, Sendable {
    /// No close code yet: the connection has not closed.
    case invalid = 0
    /// 1000: the purpose of the connection was fulfilled.
    case normalClosure = 1000
    /// 1001: an endpoint is going away (a server shutting down, a page navigated away).
    case goingAway = 1001
    /// 1002: an endpoint ended the connection because of a protocol error.
    case protocolError = 1002
    /// 1003: an endpoint received a kind of data it cannot accept.
    case unsupportedData = 1003
    /// 1005: the close frame carried no status code. Never sent on the wire.
    case noStatusReceived = 1005
    /// 1006: the connection ended without a close frame. Never sent on the wire.
    case abnormalClosure = 1006
    /// 1007: a message's data did not match its type (text that is not UTF-8).
    case invalidFramePayloadData = 1007
    /// 1008: a message violated the endpoint's policy.
    case policyViolation = 1008
    /// 1009: a message was too big to process.
    case messageTooBig = 1009
    /// 1010: the client expected the server to negotiate an extension it did not.
    case mandatoryExtensionMissing = 1010
    /// 1011: the server met an unexpected condition.
    case internalServerError = 1011
    /// 1015: the TLS handshake failed. Never sent on the wire.
    case tlsHandshakeFailure = 1015
}

extension WebSocketCloseCode {
    /// The close code a task reports for the status code of the peer's close frame.
    ///
    /// - A close frame without a status code is `.noStatusReceived` (RFC 6455 §7.1.5; Apple
    ///   documents that case as "no close code was present").
    /// - A code this enum names is that case.
    /// - Any other valid code (1012–1014, 3000–4999: registered and private codes) is
    ///   `.unsupportedData`, as FoundationNetworking maps codes it does not know. The exact code
    ///   stays available in `WebSocketCloseFrame.code`.
    init(peerCode: UInt16?) {
        guard let peerCode else {
            self = .noStatusReceived
            return
        }
        self = WebSocketCloseCode(rawValue: Int(peerCode)) ?? .unsupportedData
    }

    /// Whether an endpoint may put this code in a close frame: 1005, 1006 and 1015 are reserved
    /// for reporting, and `.invalid` is no status code at all (RFC 6455 §7.4.1).
    var isSendable: Bool {
        switch self {
        case .invalid, .noStatusReceived, .abnormalClosure, .tlsHandshakeFailure: return false
        default: return true
        }
    }
}
