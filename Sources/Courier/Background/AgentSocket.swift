import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why a frame could not be sent or read.
package enum AgentWireError: Error, Equatable, Sendable {
    /// The peer closed the connection (or it was closed here).
    case closed
    /// The frame's length is 0 or over ``AgentProtocol/maximumMessageSize``.
    case badLength(Int)
    /// The frame is not a message of this protocol version.
    case malformed(String)
    /// A system call failed.
    case system(String)
}

/// One connected Unix stream socket carrying the agent protocol's frames (a 4-byte big-endian
/// length, then JSON), used by both ends.
///
/// Sending is safe from any thread (one frame at a time, under the write lock); receiving is for
/// one reader thread. ``close()`` may come from any thread and wakes a blocked reader or writer.
///
/// The descriptor's number is closed only once no thread is in a system call on it
/// (``DescriptorState``): `close()` shuts the connection down, and the last thread to leave its
/// call closes the number. After `close()` no call touches the number again, so a reader between
/// two `recv` calls never reads from a descriptor the process opened meanwhile under that number.
package final class AgentSocket: @unchecked Sendable {
    // `@unchecked Sendable`: `descriptor` is immutable; `writeLock` serialises whole frames, and
    // who uses the descriptor lives in a `Locked`.
    private let descriptor: Int32
    private let writeLock = Lock()
    private let descriptorState = Locked(DescriptorState.open(users: 0))

    /// Who may use the descriptor.
    private enum DescriptorState {
        /// Open; `users` threads are in a system call on it.
        case open(users: Int)
        /// ``close()`` shut the connection down while `users` (more than 0) threads were in a call
        /// on it: the last to leave closes the descriptor.
        case closing(users: Int)
        /// The descriptor is closed (or about to be, by the thread that set this): its number may
        /// name something else now, and no one uses it.
        case closed
    }

    /// Wraps a connected descriptor; the socket owns it from now on.
    package init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit { close() }

    /// Connects to the agent's socket at `path`. The socket file must be this user's, and so must
    /// the process at the other end (`SO_PEERCRED`): another user's agent is never trusted.
    package static func connect(path: String) throws(AgentWireError) -> AgentSocket {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw .system("no agent socket at \(path): \(String(cString: strerror(errno)))") }
        guard info.st_mode & S_IFMT == S_IFSOCK, info.st_uid == geteuid() else {
            throw .system("\(path) is not a socket of this user's")
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system("socket: \(String(cString: strerror(errno)))") }
        var address = try unixAddress(path)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw .system("cannot connect to \(path): \(reason)")
        }
        let socket = AgentSocket(descriptor: fd)
        guard socket.peerUserID == geteuid() else {
            throw .system("the process behind \(path) is not this user's")
        }
        return socket
    }

    /// `path` as a `sockaddr_un`; throws when it does not fit (108 bytes with the terminator).
    package static func unixAddress(_ path: String) throws(AgentWireError) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity, !bytes.contains(0) else {
            throw .system("the socket path \(path) is longer than a Unix socket allows (\(capacity - 1) bytes)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
            raw[bytes.count] = 0
        }
        return address
    }

    /// The user at the other end (`SO_PEERCRED`), or `nil` when the kernel does not say.
    package var peerUserID: uid_t? {
        var credentials = PeerCredentials()
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        guard withDescriptor({ getsockopt($0, SOL_SOCKET, PeerCredentials.option, &credentials, &length) }) == 0,
              length == socklen_t(MemoryLayout<PeerCredentials>.size) else { return nil }
        return credentials.uid
    }

    /// Sends one message as a frame.
    package func send<Message: Encodable>(_ message: Message) throws(AgentWireError) {
        let body: Data
        do {
            body = try JSONEncoder().encode(message)
        } catch {
            throw .malformed("cannot encode: \(error)")
        }
        guard body.count <= AgentProtocol.maximumMessageSize else { throw .badLength(body.count) }
        var frame = Data(capacity: body.count + 4)
        let length = UInt32(body.count).bigEndian
        withUnsafeBytes(of: length) { frame.append(contentsOf: $0) }
        frame.append(body)
        try sendRaw(frame)
    }

    /// Sends bytes as they are (the tests use it to send malformed frames).
    package func sendRaw(_ bytes: Data) throws(AgentWireError) {
        let failure: AgentWireError? = writeLock.withLock {
            bytes.withUnsafeBytes { raw -> AgentWireError? in
                var offset = 0
                while offset < raw.count {
                    guard let base = raw.baseAddress else { return nil }
                    guard let sent = withDescriptor({ Glibc.send($0, base + offset, raw.count - offset, Int32(MSG_NOSIGNAL)) }) else {
                        return .closed
                    }
                    if sent < 0 {
                        let code = errno
                        if code == EINTR { continue }
                        return code == EPIPE || code == ECONNRESET || isClosed ? .closed
                            : .system("send: \(String(cString: strerror(code)))")
                    }
                    offset += sent
                }
                return nil
            }
        }
        if let failure { throw failure }
    }

    /// Reads the next frame and decodes it; throws ``AgentWireError/closed`` at the end.
    package func receive<Message: Decodable>(_ type: Message.Type) throws(AgentWireError) -> Message {
        var header = [UInt8](repeating: 0, count: 4)
        try readExactly(&header)
        let length = header.reduce(0) { ($0 << 8) | Int($1) }
        guard length > 0, length <= AgentProtocol.maximumMessageSize else { throw .badLength(length) }
        var body = [UInt8](repeating: 0, count: length)
        try readExactly(&body)
        do {
            return try JSONDecoder().decode(Message.self, from: Data(body))
        } catch {
            throw .malformed("not a message of protocol version \(AgentProtocol.version)")
        }
    }

    private func readExactly(_ buffer: inout [UInt8]) throws(AgentWireError) {
        var offset = 0
        let count = buffer.count
        while offset < count {
            let read = buffer.withUnsafeMutableBytes { raw in
                withDescriptor { recv($0, raw.baseAddress! + offset, count - offset, 0) }
            }
            guard let received = read, received != 0 else { throw .closed }
            if received < 0 {
                let code = errno
                if code == EINTR { continue }
                throw isClosed ? .closed : .system("recv: \(String(cString: strerror(code)))")
            }
            offset += received
        }
    }

    /// Shuts the connection down, which wakes a thread blocked in `recv` or `send` on it, and
    /// closes the descriptor: here when no thread is in a call on it, otherwise by the last one to
    /// leave its call. Once only; later calls do nothing.
    package func close() {
        let closeHere = descriptorState.withLock { state -> Bool in
            guard case .open(let users) = state else { return false }
            // Under the lock: the number is still this socket's (no one can close it meanwhile).
            shutdown(descriptor, Int32(SHUT_RDWR))
            state = users == 0 ? .closed : .closing(users: users)
            return users == 0
        }
        if closeHere { _ = Glibc.close(descriptor) }
    }

    /// Whether ``close()`` was called.
    private var isClosed: Bool {
        descriptorState.withLock { state in
            if case .open = state { return false }
            return true
        }
    }

    /// Runs `call` with the descriptor, counted as one of its users so that it is not closed under
    /// the call; `nil` (without calling) once ``close()`` was called.
    private func withDescriptor<Result>(_ call: (Int32) -> Result) -> Result? {
        let entered = descriptorState.withLock { state -> Bool in
            guard case .open(let users) = state else { return false }
            state = .open(users: users + 1)
            return true
        }
        guard entered else { return nil }
        let result = call(descriptor)
        // Keep the call's errno for the caller across the lock and a possible close.
        let savedErrno = errno
        let closeHere = descriptorState.withLock { state -> Bool in
            switch state {
            case .open(let users):
                state = .open(users: users - 1)
                return false
            case .closing(let users) where users == 1:
                state = .closed
                return true
            case .closing(let users):
                state = .closing(users: users - 1)
                return false
            case .closed:
                return false
            }
        }
        if closeHere { _ = Glibc.close(descriptor) }
        errno = savedErrno
        return result
    }
}

/// Linux's `struct ucred`, which Swift's Glibc module does not import (it needs `_GNU_SOURCE`):
/// what `SO_PEERCRED` fills in.
private struct PeerCredentials {
    /// `SO_PEERCRED` (asm-generic/socket.h).
    static let option: Int32 = 17
    var pid: pid_t = 0
    var uid: uid_t = 0
    var gid: gid_t = 0
}
