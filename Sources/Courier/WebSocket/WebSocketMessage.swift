import Foundation

/// One WebSocket message, binary data or text: the core's name for
/// ``URLSessionWebSocketTask/Message`` (declared in the task, exactly as FoundationNetworking
/// declares it), so the protocol core reads as before.
typealias WebSocketMessage = URLSessionWebSocketTask.Message
