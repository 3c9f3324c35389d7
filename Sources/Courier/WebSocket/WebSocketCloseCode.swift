import Foundation

/// Why a WebSocket connection closed, the status code of RFC 6455 §7.4: the core's name for
/// ``URLSessionWebSocketTask/CloseCode`` (declared in the task, exactly as FoundationNetworking
/// declares it).
typealias WebSocketCloseCode = URLSessionWebSocketTask.CloseCode

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
