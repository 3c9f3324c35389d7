import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An in-process TCP server on 127.0.0.1 (an ephemeral port) for the stream-task tests, one thread
/// per connection, blocking sockets with a receive timeout so ``stop()`` ends everything within a
/// second.
final class StreamEchoServer: @unchecked Sendable {
    enum Behaviour: Sendable {
        /// Writes back every byte it reads; at the client's end of stream it closes.
        case echo
        /// Sends `greeting`, then echoes.
        case greetThenEcho(Data)
        /// Accepts, never reads (with a small receive buffer), never writes.
        case stall
        /// Sends `bytes` and closes at once.
        case sendAndClose(Data)
    }

    let port: Int
    private let listener: Int32
    private let behaviour: Behaviour
    private let state = Locked<(stopped: Bool, sockets: [Int32])>((false, []))

    init(_ behaviour: Behaviour) throws {
        self.behaviour = behaviour
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw FaultServerError("socket() failed") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if case .stall = behaviour {
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
        thread.name = "stream-echo-server"
        thread.start()
    }

    deinit { stop() }

    /// Closes the listener and every connection (closes happen under the lock, after the socket
    /// is forgotten, as in ``TCPTestServer``).
    func stop() {
        state.withLock { current in
            if current.stopped { return }
            current.stopped = true
            for fd in current.sockets { shutdown(fd, Int32(SHUT_RDWR)) }
            current.sockets = []
            shutdown(listener, Int32(SHUT_RDWR))
            close(listener)
        }
    }

    private var stopped: Bool { state.current.stopped }

    private static func setTimeout(_ fd: Int32) {
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    private func acceptLoop() {
        while !stopped {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
                return
            }
            let tracked = state.withLock { current -> Bool in
                guard !current.stopped else { return false }
                current.sockets.append(client)
                return true
            }
            guard tracked else {
                close(client)
                return
            }
            Self.setTimeout(client)
            let thread = Thread { [self] in serve(client) }
            thread.name = "stream-echo-connection"
            thread.start()
        }
    }

    private func serve(_ fd: Int32) {
        defer {
            state.withLock { current in
                if let index = current.sockets.firstIndex(of: fd) {
                    current.sockets.remove(at: index)
                    close(fd)
                }
            }
        }
        switch behaviour {
        case .echo:
            echo(fd)
        case .greetThenEcho(let greeting):
            guard send(fd, greeting) else { return }
            echo(fd)
        case .stall:
            while !stopped { usleep(20_000) }
        case .sendAndClose(let bytes):
            _ = send(fd, bytes)
        }
    }

    private func echo(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !stopped {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count == 0 { return }
            if count < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
                return
            }
            guard send(fd, Data(buffer[0..<count])) else { return }
        }
    }

    private func send(_ fd: Int32, _ data: Data) -> Bool {
        var offset = 0
        while offset < data.count {
            let sent = data.withUnsafeBytes { raw in
                raw.baseAddress.map { Glibc.send(fd, $0 + offset, data.count - offset, Int32(MSG_NOSIGNAL)) } ?? -1
            }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }
}
