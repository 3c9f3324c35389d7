import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A raw TCP server on 127.0.0.1 (an ephemeral port) for faults below any protocol and for stream
/// tasks: a proxy to another local port that cuts the connection after a number of bytes, a server
/// that greets with fixed bytes and hangs up, one that accepts and never says anything, an echo
/// server, and one that never reads.
///
/// One thread per connection (a proxy: per direction); blocking sockets with receive timeouts, so
/// ``stop()`` ends everything within a second.
final class TCPTestServer: @unchecked Sendable {
    enum Behaviour: Sendable {
        /// Forwards to 127.0.0.1:`port`; once `cutAfter` bytes went through in `direction` (if
        /// set), both connections are closed.
        case proxy(port: Int, cutAfter: Int?, direction: Direction = .fromServer)
        /// Writes these bytes, then closes.
        case greet(Data)
        /// Accepts and stays silent until stopped.
        case silent
        /// Writes `greeting`, then writes back every byte it reads; closes at the client's end of
        /// stream.
        case echo(greeting: Data = Data())
        /// Accepts and neither reads nor writes until stopped, with a small receive buffer: a
        /// client's writes soon stop moving.
        case stall
    }

    /// Which bytes a proxy counts before it cuts.
    enum Direction: Sendable {
        case fromServer
        case toServer
    }

    let port: Int
    private let listener: Int32
    private let behaviour: Behaviour
    private let state = Locked<(stopped: Bool, sockets: [Int32], cuts: Int)>((false, [], 0))

    init(_ behaviour: Behaviour) throws {
        self.behaviour = behaviour
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw FaultServerError("socket() failed") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if case .stall = behaviour {
            // Before listen: accepted sockets inherit it, and the window they offer follows it.
            var small: Int32 = 4096
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 64) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw FaultServerError("could not listen")
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Self.setTimeout(fd)
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "tcp-test-server"
        thread.start()
    }

    deinit { stop() }

    /// How many connections the proxy cut.
    var cuts: Int { state.current.cuts }

    /// Closes the listener and every connection.
    ///
    /// The shutdowns happen under the state's lock, and every close of a tracked socket (and of the
    /// listener) happens under it too, after the socket is forgotten: so a descriptor number this
    /// server closed, which the system may since have given to another test's socket, is never shut
    /// down here.
    func stop() {
        state.withLock { current in
            if current.stopped { return }
            current.stopped = true
            for fd in current.sockets { shutdown(fd, Int32(SHUT_RDWR)) }
            current.sockets = []
            shutdown(listener, Int32(SHUT_RDWR))
        }
    }

    /// Closes a connection's socket and forgets it, under the lock ``stop()`` shuts sockets down with.
    private func closeTracked(_ fd: Int32) {
        state.withLock { current in
            current.sockets.removeAll { $0 == fd }
            close(fd)
        }
    }

    private var stopped: Bool { state.current.stopped }

    private static func setTimeout(_ fd: Int32) {
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    private func track(_ fd: Int32) -> Bool {
        state.withLock { current in
            if current.stopped { return false }
            current.sockets.append(fd)
            return true
        }
    }

    private func acceptLoop() {
        while !stopped {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
                break
            }
            guard track(client) else {
                close(client)
                break
            }
            let thread = Thread { [self] in serve(client) }
            thread.start()
        }
        state.withLock { _ in close(listener) }
    }

    private func serve(_ client: Int32) {
        switch behaviour {
        case .greet(let bytes):
            _ = bytes.withUnsafeBytes { sendAll($0, to: client) }
            shutdown(client, Int32(SHUT_RDWR))
            closeTracked(client)
        case .echo(let greeting):
            Self.setTimeout(client)
            if greeting.withUnsafeBytes({ sendAll($0, to: client) }) { echo(client) }
            closeTracked(client)
        case .stall:
            while !stopped { usleep(20_000) }
            closeTracked(client)
        case .silent:
            Self.setTimeout(client)
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !stopped {
                let count = recv(client, &buffer, buffer.count, 0)
                if count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) { break }
            }
            closeTracked(client)
        case .proxy(let port, let cutAfter, let direction):
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            guard upstream >= 0, connected, track(upstream) else {
                close(client)
                if upstream >= 0 { close(upstream) }
                return
            }
            Self.setTimeout(client)
            Self.setTimeout(upstream)
            let toServer = Thread { [self] in pump(from: client, to: upstream, limit: direction == .toServer ? cutAfter : nil) }
            toServer.start()
            pump(from: upstream, to: client, limit: direction == .fromServer ? cutAfter : nil)
        }
    }

    /// Copies `from` → `to` until either side ends, the server stops, or `limit` bytes went through
    /// (then both sockets are shut down: the connection drops mid-stream).
    private func pump(from source: Int32, to target: Int32, limit: Int?) {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var total = 0
        while !stopped {
            var want = buffer.count
            if let limit { want = min(want, limit - total) }
            if want <= 0 {
                state.withLock { $0.cuts += 1 }
                break
            }
            let count = recv(source, &buffer, want, 0)
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { continue }
            if count <= 0 { break }
            guard buffer.withUnsafeBytes({ sendAll(UnsafeRawBufferPointer(rebasing: $0[0..<count]), to: target) }) else { break }
            total += count
        }
        shutdown(source, Int32(SHUT_RDWR))
        shutdown(target, Int32(SHUT_RDWR))
    }

    /// Writes back what `client` sends until its end of stream, an error, or the server stops.
    private func echo(_ client: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while !stopped {
            let count = recv(client, &buffer, buffer.count, 0)
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { continue }
            if count <= 0 { return }
            guard buffer.withUnsafeBytes({ sendAll(UnsafeRawBufferPointer(rebasing: $0[0..<count]), to: client) }) else { return }
        }
    }

    /// Sends all of `bytes` (blocking); `false` when the connection failed first.
    private func sendAll(_ bytes: UnsafeRawBufferPointer, to socket: Int32) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        var sent = 0
        while sent < bytes.count {
            let written = send(socket, base + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return false }
            sent += written
        }
        return true
    }
}
