import Foundation

/// One stream task's connection: its ``StreamStateMachine`` and the completion handlers of the
/// reads and writes the app queued, under one lock, and the transport (socket, TLS), which only the
/// thread driving the session's ``CurlMultiLoop`` touches (``serviceSocket(on:readable:writable:)``,
/// in `StreamConnection+Transport.swift`).
///
/// Every event — a call of the app, bytes from the socket, a timer, the delegate's trust answer —
/// goes through ``handle(_:)``: the machine decides under the lock, the handlers it completes are
/// moved to the *outbox* in the same critical section, and after unlocking the outbox is delivered
/// on the delegate queue (through the task's event queue, so in order with the task's other
/// messages), the transport is asked for service, and the task is ended when the machine says so.
/// The outbox is also emptied right before the task's completion, so no handler is lost when a
/// cancel drops the task's queued steps.
final class StreamConnection: CurlLoopSocketClient, @unchecked Sendable {
    /// A read's completion handler.
    typealias ReadHandler = @Sendable (Data?, Bool, (any Error)?) -> Void
    /// A write's completion handler.
    typealias WriteHandler = @Sendable ((any Error)?) -> Void

    /// What the lock guards.
    struct State {
        var machine: StreamStateMachine
        var lastID = 0
        var readers: [Int: ReadHandler] = [:]
        var writers: [Int: (bytes: Int, handler: WriteHandler)] = [:]
        /// Deliveries for the delegate queue, in order.
        var outbox: [@Sendable () -> Void] = []
        /// The resolver's answer, for the next service.
        var resolved: Result<[StreamSocket.Address], URLError>?
        /// The streams were captured: the task ends without `didCompleteWithError`.
        var captured = false
        /// For a socket adopted from a data task (`.becomeStream`): the bytes read past the
        /// response's head, which the stream starts with; `nil`: connect when resumed.
        var adoptedBytes: Data?
        /// The session's loop, set by ``start()`` with the machine's resume: a thread that sees the
        /// machine ask for service sees the loop too (an app's `cancel()` may race its `resume()`).
        var loop: CurlMultiLoop?
    }

    let host: String
    let port: Int
    /// The URL errors carry (`failingURL`): `tcp://host:port`.
    let url: URL?
    let environment: HandlerEnvironment
    /// The session's `timeoutIntervalForRequest`: what bounds the connect (0 or less: nothing).
    let requestTimeout: TimeInterval
    /// The session's `timeoutIntervalForResource`: the longest the task may live (0 or infinite: no limit).
    let resourceTimeout: TimeInterval
    /// Whether the connection was started (claimed once, by ``start()`` or by a completion that
    /// comes first and closes an adopted socket nobody served).
    private let began = OnceFlag()
    /// The task this connection serves (the task owns the connection).
    weak var task: URLSessionStreamTask?
    let state: Locked<State>

    // Transport: touched only by the thread driving the loop (drive lock held), in
    // `StreamConnection+Transport.swift`.
    var socket: StreamSocket?
    var tls: StreamTLS?
    var addresses: [StreamSocket.Address] = []
    var nextAddress = 0
    var lastConnectFailure: Int32 = 0
    var connecting = false
    var handshaking = false
    var handshakeWants = (read: false, write: false)
    var watching: (read: Bool, write: Bool)?
    var transportClosed = false
    /// Claimed by whoever closes or hands over the socket: the loop's service, or `loopDidStop`
    /// (which may run on another thread once the loop has stopped).
    let closeOnce = OnceFlag()

    /// A connection to `host` and `port`, made when the task is resumed; or, with `adopting`, one
    /// over a socket that is connected already (a data task's, after an HTTP upgrade), which then
    /// starts with `buffered`: the bytes read past the response's head.
    init(host: String, port: Int, environment: HandlerEnvironment, requestTimeout: TimeInterval, resourceTimeout: TimeInterval,
         adopting adopted: StreamSocket? = nil) {
        self.host = host
        self.port = port
        self.environment = environment
        self.requestTimeout = requestTimeout
        self.resourceTimeout = resourceTimeout
        socket = adopted
        var components = URLComponents()
        components.scheme = "tcp"
        components.host = host.contains(":") ? "[\(host)]" : host
        components.port = port
        url = components.url
        state = Locked(State(machine: StreamStateMachine(url: url), adoptedBytes: adopted == nil ? nil : Data()))
    }

    // MARK: - The app's calls

    /// An adopted socket's stream starts with `bytes` (those read past the response's head). Before
    /// the task is resumed.
    func startWith(_ bytes: Data) {
        state.withLock { state in
            if state.adoptedBytes != nil { state.adoptedBytes = bytes }
        }
    }

    /// Connects (once), on the session's loop; an adopted socket is served there at once.
    func start() {
        guard began.claim() else { return }
        guard let loop = CurlMultiLoop.shared(in: environment) else {
            handle { $0.failed(URLError(.cannotConnectToHost, url: self.url, description: "The session can no longer open connections.")) }
            if closeOnce.claim() { socket?.close() }
            return
        }
        let limit = resourceTimeout
        handleState { state in
            state.loop = loop
            return state.machine.resume(connectedWith: state.adoptedBytes)
        }
        if limit > 0, limit.isFinite {
            DispatchQueue.global().asyncAfter(deadline: .now() + limit) { [weak self] in
                self?.handle { $0.resourceTimedOut(after: limit) }
            }
        }
    }

    /// Queues a read; `timeout` > 0 fails it with `timedOut` after that many seconds.
    func read(minimum: Int, maximum: Int, timeout: TimeInterval, handler: @escaping ReadHandler) {
        var id = 0
        handleState { state in
            state.lastID += 1
            id = state.lastID
            state.readers[id] = handler
            return state.machine.read(id: id, minimum: minimum, maximum: maximum)
        }
        armTimer(timeout, id: id)
    }

    /// Queues a write; `timeout` > 0 fails it with `timedOut` after that many seconds.
    func write(_ data: Data, timeout: TimeInterval, handler: @escaping WriteHandler) {
        var id = 0
        handleState { state in
            state.lastID += 1
            id = state.lastID
            state.writers[id] = (data.count, handler)
            return state.machine.write(id: id, data: data)
        }
        armTimer(timeout, id: id)
    }

    func closeRead() { handle { $0.closeRead() } }
    func closeWrite() { handle { $0.closeWrite() } }
    func startTLS() { handle { $0.startTLS() } }
    func capture() { handle { $0.capture() } }
    func cancel() { handle { $0.cancel() } }

    /// The task is about to deliver its completion (on the delegate queue): what is still queued
    /// fails with `error`, the socket closes, and every pending delivery runs now, before the
    /// completion. `true` when the streams were captured (the task then ends silently).
    func taskCompleting(error: (any Error)?) -> Bool {
        let failure = (error as? URLError) ?? URLError(.networkConnectionLost, url: url, description: "The stream task ended.")
        handleState { state in state.machine.isEnded ? [] : state.machine.end(failure, finishTask: false) }
        // Never started (an adopted socket, cancelled first): nobody serves the socket, so it is closed here.
        if began.claim(), closeOnce.claim() { socket?.close() }
        deliverOutbox()
        return state.withLock { $0.captured }
    }

    // MARK: - Events

    /// Feeds one event to the machine (with the whole state, for the app's calls that store a handler)
    /// and carries out what it answers.
    func handleState(_ event: (inout State) -> [StreamAction]) {
        let (received, sent, deliver, serviceLoop, finish): (Int, Int, Bool, CurlMultiLoop?, URLError??) = state.withLock { state in
            let actions = event(&state)
            var received = 0, sent = 0, service = false
            var finish: URLError?? = nil
            let outboxWasEmpty = state.outbox.isEmpty
            for action in actions {
                switch action {
                case .completeRead(let id, let data, let atEOF, let error):
                    guard let handler = state.readers.removeValue(forKey: id) else { continue }
                    received += data?.count ?? 0
                    state.outbox.append { handler(data, atEOF, error) }
                case .completeWrite(let id, let error):
                    guard let writer = state.writers.removeValue(forKey: id) else { continue }
                    if error == nil { sent += writer.bytes }
                    state.outbox.append { writer.handler(error) }
                case .readClosed:
                    state.outbox.append { [weak self] in self?.task?.tellReadClosed() }
                case .writeClosed:
                    state.outbox.append { [weak self] in self?.task?.tellWriteClosed() }
                case .service:
                    service = true
                case .finish(let error):
                    finish = .some(error)
                }
            }
            return (received, sent, outboxWasEmpty && !state.outbox.isEmpty, service ? state.loop : nil, finish)
        }
        if received > 0 || sent > 0 { task?.countStreamBytes(received: received, sent: sent) }
        if deliver { scheduleDelivery() }
        serviceLoop?.service(self)
        if case .some(let error) = finish { task?.complete(error: error, generation: nil) }
    }

    /// Runs the outbox's deliveries on the delegate queue.
    func scheduleDelivery() {
        guard let task else { return }
        task.enqueueStreamDelivery { [weak self] in self?.deliverOutbox() }
    }

    /// Runs every pending delivery, in order (on the delegate queue).
    func deliverOutbox() {
        let deliveries: [@Sendable () -> Void] = state.withLock { state in
            defer { state.outbox.removeAll() }
            return state.outbox
        }
        for delivery in deliveries { delivery() }
    }

    /// Fails read or write `id` with `timedOut` after `timeout` seconds, unless it completed.
    private func armTimer(_ timeout: TimeInterval, id: Int) {
        guard timeout > 0, timeout.isFinite else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [weak self] in
            self?.handle { $0.timedOut(id: id) }
        }
    }

    /// Feeds a machine-only event (no handler to store).
    func handle(_ event: (inout StreamStateMachine) -> [StreamAction]) {
        handleState { event(&$0.machine) }
    }
}
