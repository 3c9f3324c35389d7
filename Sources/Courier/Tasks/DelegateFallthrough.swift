import Foundation

/// The task messages a task's own delegate may leave to the session's delegate by not
/// implementing them.
enum DelegateMessage: Sendable {
    case redirect, challenge, needNewBodyStream, sentBodyData, completion, delayedRequest, metrics
    case waitingForConnectivity, response, becameDownload, data, cacheResponse, wroteData, resumedAtOffset
    /// `URLSessionWebSocketDelegate`'s `didOpenWithProtocol` and `didCloseWith`.
    case webSocketOpened, webSocketClosed
    /// Stream tasks: `readClosedFor`, `writeClosedFor`, `didBecome inputStream:outputStream:`, and a
    /// data task's `didBecome streamTask`.
    case readClosed, writeClosed, becameStreams, becameStream
    /// `didFinishDownloadingTo`, which a download delegate must implement: never left to the session's.
    case finishedDownloading
}

/// How a message sent to a task's own delegate falls through to the session's delegate when the
/// task's delegate does not implement it, as Apple's platforms do.
///
/// In Swift "not implemented" means the protocol extension's default ran. While the task sends a
/// message to its own delegate, it marks which delegate and which message (a task-local, so only
/// that synchronous call sees it); the default implementation of that message on that delegate
/// then does nothing — it does not call the completion handler either — and reports that it
/// deferred. The task then sends the same message, with the same completion handler, to the
/// session's delegate, so a handler is called exactly once in all. A default running at any other
/// time (for the session's delegate, or called by an app) behaves as documented.
final class DelegateFallthrough: @unchecked Sendable {
    @TaskLocal private static var current: DelegateFallthrough?

    private let delegate: ObjectIdentifier
    private let message: DelegateMessage
    private let lock = Lock()
    private var open = true
    private var deferred = false

    private init(delegate: AnyObject, message: DelegateMessage) {
        self.delegate = ObjectIdentifier(delegate)
        self.message = message
    }

    /// Runs `send`, which sends `message` to `delegate` (a task's own delegate), and returns whether
    /// the delegate handled it: `false` when the protocol's default implementation ran instead.
    static func handled(_ message: DelegateMessage, by delegate: AnyObject, _ send: () -> Void) -> Bool {
        let call = DelegateFallthrough(delegate: delegate, message: message)
        $current.withValue(call) { send() }
        return call.lock.withLock {
            call.open = false
            return !call.deferred
        }
    }

    /// For the protocols' default implementations: `true` when this default runs because `delegate`,
    /// a task's own delegate, does not implement `message`. The default then must do nothing (nor
    /// call a completion handler): the session's delegate receives the message instead.
    @discardableResult
    static func defers(_ message: DelegateMessage, of delegate: AnyObject) -> Bool {
        guard let call = current, call.message == message, call.delegate == ObjectIdentifier(delegate) else { return false }
        return call.lock.withLock {
            guard call.open, !call.deferred else { return false }
            call.deferred = true
            return true
        }
    }
}
