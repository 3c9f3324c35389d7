import Foundation

/// A WebSocket task's completion handler (a send's, a receive's, a ping's) and where it runs.
///
/// An app's handler runs on the session's delegate queue (``WebSocketCallbackQueue``), as Apple
/// documents. The async forms (`send(_:)`, `receive()`, `sendPing()`) resume a continuation, and the
/// awaiting code goes on on its own executor whatever thread resumes it: their handler is `direct`
/// and runs on the thread that decided the outcome (the loop thread for a message), which saves a
/// hop through the delegate queue per message.
struct WebSocketCallback<Value: Sendable>: Sendable {
    /// The handler.
    let body: @Sendable (Value) -> Void
    /// Whether it runs where the outcome is decided instead of on the delegate queue.
    let direct: Bool

    /// Wraps `body`.
    init(_ body: @escaping @Sendable (Value) -> Void, direct: Bool) {
        self.body = body
        self.direct = direct
    }
}
