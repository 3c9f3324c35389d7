import Foundation

/// What the connection state machine asks its owner (the task and its transport) to do. The
/// owner carries the actions out in the order they come.
enum WebSocketConnectionAction: Sendable {
    /// Send these bytes — encoded frames, already masked — after everything written before.
    case write(Data)
    /// A complete message for the task's receive queue, in the order received.
    case deliver(WebSocketMessage)
    /// The pong for the oldest `count` outstanding pings arrived: complete their
    /// `pongReceiveHandler`s with no error, oldest first.
    case resolvePings(count: Int)
    /// Send what is written, then close the transport. The close handshake is over or cannot
    /// happen; a client may first give the server a moment to close the TCP connection itself
    /// (RFC 6455 §7.1.1), never long, since no frame will follow.
    case closeTransport
    /// The connection is over; reported exactly once, and nothing else follows it. A clean end
    /// sets the task's `closeCode` and `closeReason` and is `didCloseWith`; any other fails the
    /// task's pending receives and pings with `WebSocketConnectionError.urlError(url:)`.
    case finish(WebSocketConnectionEnd)
}
