import Foundation

/// One connection from this process to the transfer agent: requests with their replies (each
/// waited for, bounded), and the agent's events handed to ``onEvent`` (with the connection they
/// came on) in the order they arrive.
///
/// A reader thread (`courier.agent`) reads the socket. When the connection ends, every waiting
/// request fails and ``onClose`` is called once, with the client.
final class BackgroundAgentClient: @unchecked Sendable {
    // `@unchecked Sendable`: `socket` and the callbacks are immutable; the rest is in `state`.
    private let socket: AgentSocket
    private let onEvent: @Sendable (AgentEvent, BackgroundAgentClient) -> Void
    private let onClose: @Sendable (BackgroundAgentClient) -> Void
    private let state = Locked(State())

    /// The longest a request waits for its reply.
    static let replyTimeout: TimeInterval = 30

    private struct State {
        var nextRequestID: UInt64 = 1
        var waiting: [UInt64: ReplySlot] = [:]
        var closed = false
    }

    /// Where one reply is left for the thread waiting for it.
    private final class ReplySlot: @unchecked Sendable {
        // `@unchecked Sendable`: `reply` is written once before `ready` is signalled, read after.
        let ready = DispatchSemaphore(value: 0)
        var reply: AgentReply?
    }

    private init(socket: AgentSocket, onEvent: @escaping @Sendable (AgentEvent, BackgroundAgentClient) -> Void,
                 onClose: @escaping @Sendable (BackgroundAgentClient) -> Void) {
        self.socket = socket
        self.onEvent = onEvent
        self.onClose = onClose
    }

    /// Connects to the agent of `directories`, starting it (`launcher`) when none answers, and
    /// starts reading.
    static func connect(directories: BackgroundDirectories, executable: String?, launchEnvironment: [String: String],
                        url: URL?, onEvent: @escaping @Sendable (AgentEvent, BackgroundAgentClient) -> Void,
                        onClose: @escaping @Sendable (BackgroundAgentClient) -> Void) throws(URLError) -> BackgroundAgentClient {
        let socket: AgentSocket
        if let connected = try? AgentSocket.connect(path: directories.socketPath) {
            socket = connected
        } else {
            guard let path = AgentLauncher.locate(explicit: executable) else {
                throw URLError(.cannotConnectToHost, url: url, description:
                    "No transfer agent answers at \(directories.socketPath) and no \(AgentLauncher.executableName) executable was found (set \(AgentLauncher.pathVariable), or install it beside the app or on PATH).")
            }
            try AgentLauncher.launch(path, directories: directories, environment: launchEnvironment, url: url)
            var lastError = "it did not start listening"
            var connected: AgentSocket?
            let deadline = Date().addingTimeInterval(15)
            while connected == nil, Date() < deadline {
                do {
                    connected = try AgentSocket.connect(path: directories.socketPath)
                } catch {
                    lastError = "\(error)"
                    usleep(10_000)
                }
            }
            guard let connected else {
                throw URLError(.cannotConnectToHost, url: url,
                               description: "The transfer agent \(path) was started but cannot be reached: \(lastError).")
            }
            socket = connected
        }
        let client = BackgroundAgentClient(socket: socket, onEvent: onEvent, onClose: onClose)
        NamedThread.start("courier.agent") { client.readLoop() }
        return client
    }

    /// Sends `request` and waits for its reply; a failure reply becomes a `URLError`.
    func request(_ request: AgentRequest, url: URL?) throws(URLError) -> AgentReply {
        let slot = ReplySlot()
        let id: UInt64? = state.withLock { state in
            guard !state.closed else { return nil }
            let id = state.nextRequestID
            state.nextRequestID += 1
            state.waiting[id] = slot
            return id
        }
        guard let id else { throw Self.disconnected(url) }
        do {
            try socket.send(AgentClientMessage(requestID: id, request: request))
        } catch {
            _ = state.withLock { $0.waiting.removeValue(forKey: id) }
            throw Self.disconnected(url)
        }
        guard slot.ready.wait(timeout: .now() + Self.replyTimeout) == .success, let reply = slot.reply else {
            _ = state.withLock { $0.waiting.removeValue(forKey: id) }
            throw Self.disconnected(url)
        }
        if case .failure(let code, let message) = reply {
            throw URLError((URLError.Code(rawValue: code) ?? .unknown), url: url, description: message)
        }
        return reply
    }

    /// Sends `request` without waiting for its reply (acknowledgements).
    func post(_ request: AgentRequest) {
        let id: UInt64? = state.withLock { state in
            guard !state.closed else { return nil }
            defer { state.nextRequestID += 1 }
            return state.nextRequestID
        }
        guard let id else { return }
        try? socket.send(AgentClientMessage(requestID: id, request: request))
    }

    /// Closes the connection; waiting requests fail.
    func close() { socket.close() }

    private static func disconnected(_ url: URL?) -> URLError {
        URLError(.backgroundSessionWasDisconnected, url: url, description: "The connection to the transfer agent was lost.")
    }

    private func readLoop() {
        while true {
            let message: AgentServerMessage
            do {
                message = try socket.receive(AgentServerMessage.self)
            } catch {
                break
            }
            guard message.version == AgentProtocol.version else { break }
            switch message.body {
            case .reply(let id, let reply):
                let slot = state.withLock { $0.waiting.removeValue(forKey: id) }
                if let slot {
                    slot.reply = reply
                    slot.ready.signal()
                }
            case .event(let event):
                onEvent(event, self)
            }
        }
        socket.close()
        let slots = state.withLock { state in
            state.closed = true
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        for slot in slots { slot.ready.signal() }
        onClose(self)
    }
}
