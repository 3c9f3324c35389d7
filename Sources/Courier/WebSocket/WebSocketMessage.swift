import Foundation

/// One WebSocket message, as `URLSessionWebSocketTask.Message`: binary data or text.
///
/// Shaped exactly like FoundationNetworking's `URLSessionWebSocketTask.Message`
/// (`public enum Message : Sendable` with `case data(Data)` and `case string(String)`, nothing
/// more — in particular not `Equatable`), so that the task can later declare it as its nested
/// public type and keep this name as an internal typealias:
/// `typealias WebSocketMessage = URLSessionWebSocketTask.Message`.
enum WebSocketMessage: Sendable {
    /// A binary message (opcode 0x2).
    case data(Data)
    /// A text message (opcode 0x1), always valid UTF-8 on the wire.
    case string(String)
}
