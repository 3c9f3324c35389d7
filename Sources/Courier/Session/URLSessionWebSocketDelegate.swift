import Foundation

/// What a WebSocket task tells its delegate (the task's own, or the session's) about its
/// connection, on the session's delegate queue, besides `URLSessionTaskDelegate`'s messages.
public protocol URLSessionWebSocketDelegate: URLSessionTaskDelegate {
    /// The opening handshake succeeded; `protocol` is the subprotocol the server selected among
    /// those offered (`nil`: none).
    func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol protocol: String?)

    /// The server's close frame arrived and the close handshake completed: its code
    /// (`.noStatusReceived` when it had none) and reason. The task's completion follows.
    func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask,
                    didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?)
}

extension URLSessionWebSocketDelegate {
    /// Does nothing (a task's own delegate without it leaves the message to the session's).
    public func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol protocol: String?) {
        DelegateFallthrough.defers(.webSocketOpened, of: self)
    }

    /// Does nothing (a task's own delegate without it leaves the message to the session's).
    public func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask,
                           didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?) {
        DelegateFallthrough.defers(.webSocketClosed, of: self)
    }
}
