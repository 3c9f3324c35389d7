import Foundation

/// A task that exchanges messages with a server over the WebSocket protocol (RFC 6455), on a `ws:`
/// or `wss:` URL.
///
/// Made by ``URLSession/webSocketTask(with:)-(URL)`` and its siblings, it starts suspended like every
/// task. ``resume()`` performs the opening handshake — an HTTP/1.1 upgrade with the request's
/// header fields, the session's cookies, credentials, proxy and TLS trust, as a data task would send
/// it — and then the connection stays open until either side closes it. Messages sent before the
/// handshake completes wait for it; receives are answered in order, each with the next message.
/// The delegate (a ``URLSessionWebSocketDelegate``) hears `didOpenWithProtocol` and, for a close
/// handshake, `didCloseWith`, then `didCompleteWithError`. Completion handlers of sends, receives
/// and pings run on the session's delegate queue, in order.
///
/// When the app does not ask for messages, Courier stops reading the socket once 64 KiB (or 64
/// messages) wait, and reads again when it does. A message over ``maximumMessageSize`` fails the
/// connection with close code 1009; a protocol violation by the server with 1002 (1007 for text
/// that is not UTF-8).
open class URLSessionWebSocketTask: URLSessionTask, @unchecked Sendable {
    /// Why a connection closed: a status code of RFC 6455 §7.4.
    public enum CloseCode: Int, Sendable {
        /// No close code yet: the connection has not closed.
        case invalid = 0
        /// 1000: the purpose of the connection was fulfilled.
        case normalClosure = 1000
        /// 1001: an endpoint is going away (a server shutting down, a page navigated away).
        case goingAway = 1001
        /// 1002: an endpoint ended the connection because of a protocol error.
        case protocolError = 1002
        /// 1003: an endpoint received a kind of data it cannot accept (also any valid code this
        /// enumeration does not name, such as 1012–1014 and 3000–4999).
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

    /// One message: binary data or text.
    public enum Message: Sendable {
        /// A binary message (opcode 0x2).
        case data(Data)
        /// A text message (opcode 0x1), valid UTF-8 on the wire.
        case string(String)
    }

    /// How long Courier waits for the server's close frame after sending its own
    /// (``cancel(with:reason:)``) before it closes the connection and fails the task with `timedOut`.
    static let closeHandshakeTimeout: TimeInterval = 3

    /// The connection's protocol and the app's waiting operations.
    let webSocket: Locked<WebSocketTaskState>
    /// The open connection and the handler that opened it (it reports the task's end).
    let link = Locked<WebSocketTaskLink>(WebSocketTaskLink())
    /// The send, receive and ping completion handlers, in order, on the delegate queue.
    let callbacks: WebSocketCallbackQueue

    init(session: URLSession, context: TaskSessionContext, identifier: Int, request: URLRequest, creationFailure: URLError?) {
        webSocket = Locked(WebSocketTaskState(url: request.url))
        callbacks = WebSocketCallbackQueue(queue: context.delegateQueue)
        super.init(session: session, context: context, identifier: identifier, request: request, completion: .delegate,
                   creationFailure: creationFailure)
    }

    /// The error the task completed with; `nil` while it runs and after a clean close. Settable, as
    /// FoundationNetworking declares it; the task's completion sets it again.
    override open var error: (any Error)? {
        get { super.error }
        set { lock.withLock { core.error = newValue } }
    }

    /// Starts the opening handshake (or continues a suspended task).
    override open func resume() { super.resume() }

    /// The task's end is decided (not by the connection's own end: cancelled, a failed handshake,
    /// a timeout): what waits fails.
    override func didDecideCompletion(error: (any Error)?) {
        let failure = error ?? WebSocketConnectionError.notConnected.urlError(url: originalRequest?.url)
        perform(webSocket.withLock { $0.taskEnded(with: failure) })
    }

    /// A redirect's http or https URL is loaded as ws or wss.
    override func requestForHandler(_ request: URLRequest) -> URLRequest {
        guard let url = request.url, let mapped = WebSocketURLProtocol.webSocketURL(for: url), mapped != url else { return request }
        var adapted = request
        adapted.url = mapped
        return adapted
    }

    /// Cancels the task: an open connection is sent a close frame without a status code and closed;
    /// the task completes with `URLError.cancelled`, and waiting receives, sends and pings fail.
    override open func cancel() {
        let cancelled = URLError(.cancelled, url: currentRequest?.url ?? originalRequest?.url, description: "The task was cancelled.")
        perform(webSocket.withLock { $0.cancel(with: cancelled) })
        super.cancel()
    }

    /// Closes the connection with `closeCode` and `reason` (at most 123 bytes of UTF-8 are sent):
    /// the close frame goes out, and once the server answers with its own the delegate hears
    /// `didCloseWith` and the task completes. A server that does not answer within a few seconds
    /// fails the task with `timedOut`. Before the handshake completed this cancels the task.
    open func cancel(with closeCode: CloseCode, reason: Data?) {
        enum Next { case closing([WebSocketTaskState.Action]), cancel, nothing }
        let next: Next = webSocket.withLock {
            if $0.isOpen { return .closing($0.close(code: closeCode, reason: reason)) }
            return $0.hasEnded ? .nothing : .cancel
        }
        switch next {
        case .closing(let actions): perform(actions)
        case .cancel: super.cancel()
        case .nothing: break
        }
    }

    /// The largest message accepted, in bytes (1 MiB by default). A larger one fails the receive and
    /// the connection (close code 1009).
    open var maximumMessageSize: Int {
        get { webSocket.withLock { $0.maximumMessageSize } }
        set { webSocket.withLock { $0.maximumMessageSize = max(0, newValue) } }
    }

    /// The close code: `.invalid` until the connection closed; then the server's code
    /// (`.noStatusReceived` when its close frame had none), or `.abnormalClosure` when no close frame
    /// arrived.
    open var closeCode: CloseCode { webSocket.withLock { $0.closeCode } }

    /// The reason in the server's close frame, if it had one.
    open var closeReason: Data? { webSocket.withLock { $0.closeReason } }

    /// Sends `message`; `completionHandler` gets `nil` once its frame was handed to the socket, or
    /// the error that kept it from being sent.
    public func send(_ message: Message, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        perform(webSocket.withLock { $0.send(message, completionHandler) })
    }

    /// Receives the next message; receives are answered in the order they were made. Fails once the
    /// connection ended and no received message is left.
    public func receive(completionHandler: @escaping @Sendable (Result<Message, any Error>) -> Void) {
        perform(webSocket.withLock { $0.receive(completionHandler) })
    }

    /// Sends a ping; `pongReceiveHandler` gets `nil` when its pong arrives (pongs answer pings in
    /// order), or an error when the connection ended first.
    open func sendPing(pongReceiveHandler: @escaping @Sendable ((any Error)?) -> Void) {
        perform(webSocket.withLock { $0.sendPing(pongReceiveHandler) })
    }

    /// Sends `message` and returns once its frame was handed to the socket.
    public func send(_ message: Message) async throws {
        let _: Bool = try await withHandoffContinuation { continuation in
            perform(webSocket.withLock {
                $0.send(message, { error in
                    if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: true) }
                }, direct: true)
            })
        }
    }

    /// Receives the next message.
    public func receive() async throws -> Message {
        try await withHandoffContinuation { continuation in
            perform(webSocket.withLock { $0.receive({ continuation.resume(with: $0) }, direct: true) })
        }
    }

    /// Sends a ping and returns when its pong arrives.
    open func sendPing() async throws {
        let _: Bool = try await withHandoffContinuation { continuation in
            perform(webSocket.withLock {
                $0.sendPing({ error in
                    if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: true) }
                }, direct: true)
            })
        }
    }
}
