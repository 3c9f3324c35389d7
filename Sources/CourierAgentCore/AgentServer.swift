import Courier
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The agent's listening socket: accepts clients of the agent's own user only (`SO_PEERCRED`),
/// and gives each a reader thread that hands its requests to the ``Agent``.
///
/// The socket is bound by the agent (mode 0600 in its 0700 runtime directory), or inherited
/// already listening from systemd's socket activation (`LISTEN_FDS`, `LISTEN_PID`).
final class AgentServer: Sendable {
    private let listener: Int32
    private let agent: Agent

    /// The first descriptor systemd passes (`SD_LISTEN_FDS_START`).
    static let inheritedDescriptor: Int32 = 3

    init(listener: Int32, agent: Agent) {
        self.listener = listener
        self.agent = agent
    }

    /// A listening socket at `path` (a stale one is replaced; the caller holds the instance lock).
    static func listen(at path: String) throws(AgentWireError) -> Int32 {
        var address = try AgentSocket.unixAddress(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system("socket: \(String(cString: strerror(errno)))") }
        unlink(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, chmod(path, 0o600) == 0, Glibc.listen(fd, 64) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw .system("cannot listen at \(path): \(reason)")
        }
        return fd
    }

    /// The listening socket systemd passed, when the environment says there is one for this process.
    static func inheritedListener(environment: [String: String]) -> Int32? {
        guard environment["LISTEN_PID"].flatMap(Int32.init) == getpid(),
              let count = environment["LISTEN_FDS"].flatMap(Int.init), count >= 1 else { return nil }
        return inheritedDescriptor
    }

    /// Accepts clients on a thread of its own until the process ends.
    func start() {
        NamedThread.start("courier.accept") { [self] in
            while true {
                let fd = accept(listener, nil, nil)
                if fd >= 0 { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
                if fd < 0 {
                    if errno == EINTR || errno == ECONNABORTED { continue }
                    if errno == EMFILE || errno == ENFILE { usleep(100_000); continue }
                    return
                }
                let socket = AgentSocket(descriptor: fd)
                guard socket.peerUserID == geteuid() else {
                    socket.close()
                    continue
                }
                serve(AgentConnection(socket: socket))
            }
        }
    }

    /// Reads one client's requests until it goes away or sends something malformed (which ends
    /// that connection only).
    private func serve(_ connection: AgentConnection) {
        agent.connected(connection)
        NamedThread.start("courier.client") { [agent] in
            while true {
                let message: AgentClientMessage
                do {
                    message = try connection.socket.receive(AgentClientMessage.self)
                } catch {
                    if (error as? AgentWireError) != .closed { AgentLog.write("closing a client connection: \(error)") }
                    break
                }
                guard message.version == AgentProtocol.version else {
                    AgentLog.write("closing a client connection: protocol version \(message.version)")
                    break
                }
                agent.handle(message, from: connection)
            }
            agent.disconnected(connection)
            connection.socket.close()
        }
    }
}

/// The agent's log: lines on standard error (the state directory's `agent.log` when a session
/// started it).
enum AgentLog {
    /// Writes one line with a timestamp.
    static func write(_ line: String) {
        let stamp = ISO8601DateFormatter().string(from: Date())
        FileHandle.standardError.write(Data("\(stamp) courier-agent[\(getpid())]: \(line)\n".utf8))
    }
}
