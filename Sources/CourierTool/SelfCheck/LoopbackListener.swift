import Courier
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP listener on 127.0.0.1 and a port the system picks, for the small servers the embedded default
/// run talks to. One thread accepts; each connection gets a thread of its own that runs the handler
/// and closes the socket when the handler returns.
///
/// Every wait is bounded: the accept thread polls with a short timeout, every socket has receive and
/// send timeouts of ``ioTimeout``, and ``stop(within:)`` shuts the open connections down and waits a
/// limited time for the threads to end.
final class LoopbackListener: Sendable {
    /// The loopback address, the only one these servers use.
    static let address = "127.0.0.1"

    /// The port the listener is bound to.
    let port: Int
    /// How long one read or write on a connection may block.
    let ioTimeout: TimeInterval

    private struct State {
        var stopping = false
        var acceptLoopEnded = false
        var connections: Set<Int32> = []
    }

    private let listener: Int32
    private let state = Locked(State())
    private let handler: @Sendable (SocketConnection) -> Void

    /// Binds, listens and starts the accept thread.
    /// - Throws: a `POSIXError` when the socket cannot be created, bound or listened on.
    init(name: String, ioTimeout: TimeInterval = 10, handler: @escaping @Sendable (SocketConnection) -> Void) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Self.posixError() }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr(Self.address)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            let error = Self.posixError()
            close(fd)
            throw error
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else {
            let error = Self.posixError()
            close(fd)
            throw error
        }
        self.listener = fd
        self.port = Int(UInt16(bigEndian: actual.sin_port))
        self.ioTimeout = ioTimeout
        self.handler = handler
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "\(name) accept"
        thread.start()
    }

    /// Stops accepting, shuts down the open connections and waits at most `limit` for the threads to
    /// end. Returns whether they all ended in time. Calling it again does no harm.
    @discardableResult
    func stop(within limit: Duration = .seconds(3)) -> Bool {
        let open = state.withLock { state -> Set<Int32> in
            state.stopping = true
            return state.connections
        }
        // Wakes the connection threads out of blocking reads and writes; each closes its own socket.
        for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if state.withLock({ $0.acceptLoopEnded && $0.connections.isEmpty }) { return true }
            usleep(5_000)
        }
        return false
    }

    /// Connections open right now.
    var openConnections: Int { state.withLock { $0.connections.count } }

    private func acceptLoop() {
        defer {
            close(listener)
            state.withLock { $0.acceptLoopEnded = true }
        }
        while !state.withLock({ $0.stopping }) {
            var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 100)
            if ready < 0 && errno != EINTR { return }
            guard ready > 0 else { continue }
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED || errno == EAGAIN { continue }
                return
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            let admitted = state.withLock { state -> Bool in
                guard !state.stopping else { return false }
                state.connections.insert(client)
                return true
            }
            guard admitted else {
                close(client)
                return
            }
            let connection = SocketConnection(fd: client, timeout: ioTimeout)
            let thread = Thread { [self] in
                handler(connection)
                // Removed and closed under the lock, so `stop` never shuts down a reused number.
                state.withLock { state in
                    state.connections.remove(client)
                    close(client)
                }
            }
            thread.name = "loopback connection"
            thread.start()
        }
    }

    private static func posixError() -> POSIXError {
        POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
}
