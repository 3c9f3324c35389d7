import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The connection of a stream task after `captureStreams()`: the socket, its TLS session (if the
/// stream was secure) and the bytes the task had read ahead, shared by the captured input and
/// output streams. The socket leaves the session's loop: the streams read and write it themselves,
/// blocking as Foundation's streams do (a non-blocking socket and `poll`, so that a read waiting for
/// bytes does not hold the lock a write needs).
final class StreamCapturedChannel: @unchecked Sendable {
    // `@unchecked Sendable`: every field below is reached only under `lock`; the TLS session is
    // not thread-safe, so reads and writes take turns on it.
    private let lock = Lock()
    private var socket: StreamSocket?
    private var tls: StreamTLS?
    private var buffered: Data
    private var inputClosed = false
    private var outputClosed = false

    /// How long one `poll` waits before a blocked read or write looks again whether it was closed.
    private static let pollMilliseconds: Int32 = 200

    init(socket: StreamSocket, tls: StreamTLS?, buffered: Data) {
        self.socket = socket
        self.tls = tls
        self.buffered = buffered
    }

    deinit { socket?.close() }

    /// What a read or write did.
    enum Result: Equatable {
        case bytes(Int)
        case endOfStream
        case failed(String)
    }

    /// Reads up to `count` bytes, waiting for at least one (or the end).
    func read(into buffer: UnsafeMutablePointer<UInt8>, count: Int) -> Result {
        while true {
            let attempt: (Result?, wantsWrite: Bool, socket: StreamSocket?) = lock.withLock {
                guard !inputClosed, let socket else { return (.endOfStream, false, nil) }
                if !buffered.isEmpty {
                    let taken = min(count, buffered.count)
                    buffered.copyBytes(to: buffer, count: taken)
                    buffered = taken == buffered.count ? Data() : Data(buffered.dropFirst(taken))
                    return (.bytes(taken), false, nil)
                }
                if let tls {
                    switch tls.read(into: buffer, count: count) {
                    case .bytes(let read): return (.bytes(read), false, nil)
                    case .endOfStream: return (.endOfStream, false, nil)
                    case .failed(let reason): return (.failed(reason), false, nil)
                    case .wantRead: return (nil, false, socket)
                    case .wantWrite: return (nil, true, socket)
                    }
                }
                switch socket.read(into: buffer, count: count) {
                case .bytes(let read): return (.bytes(read), false, nil)
                case .endOfStream: return (.endOfStream, false, nil)
                case .failed(let code): return (.failed(String(cString: strerror(code))), false, nil)
                case .wouldBlock: return (nil, false, socket)
                }
            }
            if let result = attempt.0 { return result }
            attempt.socket?.poll(readable: !attempt.wantsWrite, writable: attempt.wantsWrite, milliseconds: Self.pollMilliseconds)
        }
    }

    /// Writes up to `count` bytes, waiting until the socket takes at least one.
    func write(_ buffer: UnsafePointer<UInt8>, count: Int) -> Result {
        let bytes = UnsafeRawBufferPointer(start: buffer, count: count)
        while true {
            let attempt: (Result?, wantsRead: Bool, socket: StreamSocket?) = lock.withLock {
                guard !outputClosed, let socket else { return (.failed("The stream is closed."), false, nil) }
                if let tls {
                    switch tls.write(bytes) {
                    case .bytes(let written): return (.bytes(written), false, nil)
                    case .endOfStream: return (.failed("The peer closed the connection."), false, nil)
                    case .failed(let reason): return (.failed(reason), false, nil)
                    case .wantRead: return (nil, true, socket)
                    case .wantWrite: return (nil, false, socket)
                    }
                }
                switch socket.write(bytes) {
                case .bytes(let written): return (.bytes(written), false, nil)
                case .endOfStream: return (.failed("The peer closed the connection."), false, nil)
                case .failed(let code): return (.failed(String(cString: strerror(code))), false, nil)
                case .wouldBlock: return (nil, false, socket)
                }
            }
            if let result = attempt.0 { return result }
            attempt.socket?.poll(readable: attempt.wantsRead, writable: !attempt.wantsRead, milliseconds: Self.pollMilliseconds)
        }
    }

    /// Whether a read would return at once.
    var hasBytesAvailable: Bool {
        let socket: StreamSocket? = lock.withLock { buffered.isEmpty && !inputClosed ? self.socket : nil }
        guard let socket else { return lock.withLock { !buffered.isEmpty } }
        var entry = pollfd(fd: socket.descriptor, events: Int16(POLLIN), revents: 0)
        return Glibc.poll(&entry, 1, 0) > 0
    }

    /// The input stream was closed: the read side shuts; the socket closes once both are closed.
    func closeInput() {
        lock.withLock {
            guard !inputClosed else { return }
            inputClosed = true
            buffered = Data()
            socket?.shutdown(Int32(SHUT_RD))
            closeIfDone()
        }
    }

    /// The output stream was closed: TLS close_notify, the write side shuts; the socket closes
    /// once both are closed.
    func closeOutput() {
        lock.withLock {
            guard !outputClosed else { return }
            outputClosed = true
            tls?.shutdown()
            socket?.shutdown(Int32(SHUT_WR))
            closeIfDone()
        }
    }

    /// Call with the lock held.
    private func closeIfDone() {
        guard inputClosed, outputClosed, let socket else { return }
        tls = nil
        socket.close()
        self.socket = nil
    }
}
