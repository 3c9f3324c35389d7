import Foundation

/// Everything a WebSocket task knows about its connection, as one pure value: the protocol
/// (``WebSocketConnectionStateMachine``, once the handshake succeeded), the app's operations that
/// wait (receives, pings, operations made before the connection opened), the messages received and
/// not yet asked for, and how the connection ended. Events go in, ``Action``s come out; the task
/// keeps it in a `Locked` and carries the actions out after unlocking. No I/O, no lock, no timer.
///
/// - Sends and pings made before the handshake completes wait and go out, in order, when it does.
/// - Receives are served in order from the received messages; a receive with none waits for the
///   next one. While the received messages reach ``bufferLimit`` (bytes) or ``bufferCountLimit``
///   (messages), the transport stops reading (``Action/setReading(_:)``); a receive that brings them
///   below turns it on again. So a peer that sends faster than the app receives costs at most one
///   read beyond the limit, plus the frame being decoded.
/// - Once the connection ended, messages already received can still be received; then receives,
///   sends and pings fail with the end's error.
struct WebSocketTaskState: Sendable {
    /// What to do with a received message or an error.
    typealias ReceiveHandler = WebSocketCallback<Result<WebSocketMessage, any Error>>
    /// What to do once a send's or a ping's outcome is known.
    typealias CompletionHandler = WebSocketCallback<(any Error)?>

    /// Received bytes held for receives that have not come yet, past which reading stops.
    static let bufferLimit = 64 * 1024
    /// Received messages held, past which reading stops.
    static let bufferCountLimit = 64

    /// What the task does, in order.
    enum Action: Sendable {
        /// Write these bytes (encoded frames); run `written` once they are handed to the socket.
        case write(Data, written: CompletionHandler?)
        /// Call a receive's handler.
        case receive(ReceiveHandler, Result<WebSocketMessage, any Error>)
        /// Call a send's or ping's handler.
        case complete(CompletionHandler, (any Error)?)
        /// Turn the transport's reading on or off. `order` counts the changes: actions are carried
        /// out after unlocking, possibly on two threads at once, so the transport applies a change
        /// only if no later one was applied before it (or a stale "off" could stop reading for good).
        case setReading(Bool, order: Int)
        /// Close the transport once what is written is out.
        case closeTransport
        /// Start the close handshake's timer (Courier sent its close frame).
        case armCloseTimer
        /// The handshake succeeded: tell the delegate (`didOpenWithProtocol`).
        case opened(String?)
        /// The connection is over: the task completes (after `didCloseWith` for a clean close).
        case finished(WebSocketConnectionEnd)
    }

    private enum PendingOperation: Sendable {
        case send(WebSocketMessage, CompletionHandler)
        case ping(CompletionHandler)
    }

    private enum Phase: Sendable {
        case connecting
        case open(WebSocketConnectionStateMachine)
        case ended
    }

    private var phase = Phase.connecting
    /// The URL errors name.
    let url: URL?
    /// `maximumMessageSize`; a change applies to the next frame.
    var maximumMessageSize = WebSocketMessageAssembler.defaultMaximumMessageSize {
        didSet {
            let limit = maximumMessageSize
            withMachine { $0.maximumMessageSize = limit }
        }
    }
    /// The close code: `.invalid` until the connection ended.
    private(set) var closeCode = WebSocketCloseCode.invalid
    /// The peer's close reason, if any.
    private(set) var closeReason: Data?
    /// Why operations fail once the connection ended.
    private(set) var endError: (any Error)?
    private var beforeOpen: [PendingOperation] = []
    private var received: [WebSocketMessage] = []
    private var receivedBytes = 0
    private var receivers: [ReceiveHandler] = []
    private var pings: [CompletionHandler] = []
    private var reading = true
    /// How many times `reading` changed: the `order` of the last ``Action/setReading(_:order:)``.
    private var readingChanges = 0

    /// A task's state before its handshake.
    init(url: URL?) {
        self.url = url
    }

    /// Whether the connection ended.
    var hasEnded: Bool {
        if case .ended = phase { return true }
        return false
    }

    /// Whether the handshake succeeded and the connection has not ended.
    var isOpen: Bool {
        if case .open = phase { return true }
        return false
    }

    /// Received bytes no receive has taken yet (tests).
    var bufferedByteCount: Int { receivedBytes }

    // MARK: The app's operations

    /// `send(_:completionHandler:)`.
    /// `direct`: the async form's handler (``WebSocketCallback``).
    mutating func send(_ message: WebSocketMessage, _ handler: @escaping @Sendable ((any Error)?) -> Void,
                       direct: Bool = false) -> [Action] {
        send(message, CompletionHandler(handler, direct: direct))
    }

    private mutating func send(_ message: WebSocketMessage, _ handler: CompletionHandler) -> [Action] {
        switch phase {
        case .connecting:
            beforeOpen.append(.send(message, handler))
            return []
        case .open:
            guard let result = withMachine({ $0.send(message) }) else { return [] }
            switch result {
            case .success(let bytes): return [.write(bytes, written: handler)]
            case .failure(let error): return [.complete(handler, error.urlError(url: url))]
            }
        case .ended:
            return [.complete(handler, endError)]
        }
    }

    /// `sendPing(pongReceiveHandler:)`.
    mutating func sendPing(_ handler: @escaping @Sendable ((any Error)?) -> Void, direct: Bool = false) -> [Action] {
        sendPing(CompletionHandler(handler, direct: direct))
    }

    private mutating func sendPing(_ handler: CompletionHandler) -> [Action] {
        switch phase {
        case .connecting:
            beforeOpen.append(.ping(handler))
            return []
        case .open:
            guard let result = withMachine({ $0.sendPing() }) else { return [] }
            switch result {
            case .success(let bytes):
                pings.append(handler)
                return [.write(bytes, written: nil)]
            case .failure(let error):
                return [.complete(handler, error.urlError(url: url))]
            }
        case .ended:
            return [.complete(handler, endError)]
        }
    }

    /// `receive(completionHandler:)`.
    mutating func receive(_ handler: @escaping @Sendable (Result<WebSocketMessage, any Error>) -> Void,
                          direct: Bool = false) -> [Action] {
        let handler = ReceiveHandler(handler, direct: direct)
        if !received.isEmpty {
            let message = received.removeFirst()
            receivedBytes -= Self.size(of: message)
            return [.receive(handler, .success(message))] + readingActions()
        }
        if case .ended = phase {
            return [.receive(handler, .failure(endError ?? WebSocketConnectionError.notConnected.urlError(url: url)))]
        }
        receivers.append(handler)
        return []
    }

    /// `cancel(with:reason:)` on an open connection: the close frame, then the timer. Before the
    /// handshake, or after the end, it does nothing (the task cancels).
    mutating func close(code: WebSocketCloseCode, reason: Data?) -> [Action] {
        guard let actions = withMachine({ $0.close(code: code, reason: reason) }) else { return [] }
        return convert(actions) + (actions.isEmpty ? [] : [.armCloseTimer])
    }

    // MARK: The connection's events

    /// The handshake succeeded: operations made meanwhile go out, then the first bytes are read.
    mutating func opened(selectedProtocol: String?, initialBytes: Data) -> [Action] {
        guard case .connecting = phase else { return [] }
        phase = .open(WebSocketConnectionStateMachine(maximumMessageSize: maximumMessageSize))
        var actions: [Action] = [.opened(selectedProtocol)]
        let waiting = beforeOpen
        beforeOpen = []
        for operation in waiting {
            switch operation {
            case .send(let message, let handler): actions += send(message, handler)
            case .ping(let handler): actions += sendPing(handler)
            }
        }
        if !initialBytes.isEmpty { actions += receivedBytes(initialBytes) }
        return actions
    }

    /// Bytes arrived.
    mutating func receivedBytes(_ bytes: some Sequence<UInt8>) -> [Action] {
        guard let actions = withMachine({ $0.receivedBytes(bytes) }) else { return [] }
        return convert(actions) + readingActions()
    }

    /// The close handshake's timer fired.
    mutating func closeTimedOut() -> [Action] {
        guard let actions = withMachine({ $0.closeHandshakeTimedOut() }) else { return [] }
        return convert(actions)
    }

    /// The transport closed under the connection.
    mutating func transportClosed() -> [Action] {
        guard let actions = withMachine({ $0.transportClosed() }) else { return [] }
        return convert(actions)
    }

    /// `cancel()`: an open connection gets a close frame without a status code, and everything
    /// waiting fails with `error` at once — before a close the server sends back could end the
    /// connection another way.
    mutating func cancel(with error: any Error) -> [Action] {
        var actions: [Action] = []
        if let closing = withMachine({ $0.close(code: .invalid, reason: nil) }) {
            actions = convert(closing)
        }
        return actions + taskEnded(with: error)
    }

    /// The task ended without the connection ending first (cancelled, failed handshake, timeout):
    /// every waiting operation fails with `error`. Messages received stay receivable.
    mutating func taskEnded(with error: any Error) -> [Action] {
        guard !hasEnded else { return [] }
        let wasOpen = isOpen
        phase = .ended
        closeCode = wasOpen ? .abnormalClosure : closeCode
        endError = error
        return failWaiting(with: error)
    }

    /// Runs `body` on the open connection's protocol machine; `nil` when the connection is not
    /// open. The machine is moved out of `phase` while `body` runs, so the decoder's buffer has one
    /// owner and grows in place: a copy left in `phase` would make every read of a large frame copy
    /// all of it so far (copy-on-write).
    @discardableResult
    private mutating func withMachine<R>(_ body: (inout WebSocketConnectionStateMachine) -> R) -> R? {
        guard case .open(var machine) = phase else { return nil }
        phase = .connecting
        let result = body(&machine)
        phase = .open(machine)
        return result
    }

    // MARK: Converting the protocol's actions

    private mutating func convert(_ actions: [WebSocketConnectionAction]) -> [Action] {
        var converted: [Action] = []
        for action in actions {
            switch action {
            case .write(let bytes):
                converted.append(.write(bytes, written: nil))
            case .deliver(let message):
                if receivers.isEmpty {
                    received.append(message)
                    receivedBytes += Self.size(of: message)
                } else {
                    converted.append(.receive(receivers.removeFirst(), .success(message)))
                }
            case .resolvePings(let count):
                let resolved = pings.prefix(count)
                pings.removeFirst(min(count, pings.count))
                converted += resolved.map { .complete($0, nil) }
            case .closeTransport:
                converted.append(.closeTransport)
            case .finish(let end):
                phase = .ended
                closeCode = end.closeCode
                closeReason = end.closeReason
                let error: any Error
                switch end {
                case .closed: error = WebSocketConnectionError.notConnected.urlError(url: url)
                case .failed(let failure): error = failure.urlError(url: url)
                }
                endError = error
                converted += failWaiting(with: error)
                converted.append(.finished(end))
            }
        }
        return converted
    }

    private mutating func failWaiting(with error: any Error) -> [Action] {
        var actions: [Action] = receivers.map { .receive($0, .failure(error)) }
        actions += pings.map { .complete($0, error) }
        for operation in beforeOpen {
            switch operation {
            case .send(_, let handler), .ping(let handler): actions.append(.complete(handler, error))
            }
        }
        receivers = []
        pings = []
        beforeOpen = []
        return actions
    }

    /// Turns reading off while the held messages are at a limit, on again once below.
    private mutating func readingActions() -> [Action] {
        let full = receivedBytes >= Self.bufferLimit || received.count >= Self.bufferCountLimit
        guard full == reading, isOpen else { return [] }
        reading = !full
        readingChanges += 1
        return [.setReading(reading, order: readingChanges)]
    }

    private static func size(of message: WebSocketMessage) -> Int {
        switch message {
        case .data(let data): return data.count
        case .string(let string): return string.utf8.count
        }
    }
}
