import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A stream task's TCP socket: name resolution, a non-blocking connect over IPv6 or IPv4, and
/// non-blocking reads and writes. The descriptor is owned by whoever holds the value: the
/// connection while the loop serves it, then the captured streams.
struct StreamSocket: Sendable {
    /// One address `getaddrinfo` gave for the host.
    struct Address: Sendable {
        let family: Int32
        let bytes: [UInt8]
    }

    /// What a non-blocking call did.
    enum Outcome: Sendable, Equatable {
        /// This many bytes moved.
        case bytes(Int)
        /// Nothing can move now; wait for readiness.
        case wouldBlock
        /// The peer ended its side (reads only).
        case endOfStream
        /// The call failed with this `errno`.
        case failed(Int32)
    }

    let descriptor: Int32

    /// The addresses of `host` for TCP to `port`, in the resolver's order. Blocks: call it off the
    /// loop thread.
    static func resolve(host: String, port: Int, url: URL?) -> Result<[Address], URLError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            let reason = String(cString: gai_strerror(status))
            return .failure(URLError(.cannotFindHost, url: url, description: "The host “\(host)” could not be found (\(reason))."))
        }
        defer { freeaddrinfo(first) }
        var addresses: [Address] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            if let address = current.pointee.ai_addr, current.pointee.ai_addrlen > 0 {
                let raw = UnsafeRawBufferPointer(start: address, count: Int(current.pointee.ai_addrlen))
                addresses.append(Address(family: current.pointee.ai_family, bytes: Array(raw)))
            }
            entry = current.pointee.ai_next
        }
        guard !addresses.isEmpty else {
            return .failure(URLError(.cannotFindHost, url: url, description: "The host “\(host)” has no address."))
        }
        return .success(addresses)
    }

    /// How a connect started.
    enum ConnectStart {
        /// The socket is connected (or connecting: `connected` is `false`).
        case opened(StreamSocket, connected: Bool)
        /// It failed at once with this `errno`.
        case failed(Int32)
    }

    /// Starts connecting to `address`.
    static func connect(to address: Address) -> ConnectStart {
        let descriptor = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return .failed(errno) }
        var one: Int32 = 1
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let result = address.bytes.withUnsafeBytes { raw in
            Glibc.connect(descriptor, raw.baseAddress?.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
        if result == 0 { return .opened(StreamSocket(descriptor: descriptor), connected: true) }
        let failure = errno
        if failure == EINPROGRESS { return .opened(StreamSocket(descriptor: descriptor), connected: false) }
        Glibc.close(descriptor)
        return .failed(failure)
    }

    /// After the socket became writable: `0` when the connect succeeded, else its `errno`.
    func connectResult() -> Int32 {
        var failure: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &failure, &length) == 0 else { return errno }
        return failure
    }

    /// Reads up to `count` bytes into `buffer`.
    func read(into buffer: UnsafeMutableRawPointer, count: Int) -> Outcome {
        while true {
            let read = recv(descriptor, buffer, count, 0)
            if read > 0 { return .bytes(read) }
            if read == 0 { return .endOfStream }
            let failure = errno
            if failure == EINTR { continue }
            return failure == EAGAIN || failure == EWOULDBLOCK ? .wouldBlock : .failed(failure)
        }
    }

    /// Writes `bytes` (as much as the socket takes now).
    func write(_ bytes: UnsafeRawBufferPointer) -> Outcome {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return .bytes(0) }
        while true {
            let written = send(descriptor, base, bytes.count, Int32(MSG_NOSIGNAL))
            if written >= 0 { return .bytes(written) }
            let failure = errno
            if failure == EINTR { continue }
            return failure == EAGAIN || failure == EWOULDBLOCK ? .wouldBlock : .failed(failure)
        }
    }

    /// Shuts one or both directions (`SHUT_RD`, `SHUT_WR`).
    func shutdown(_ how: Int32) { _ = Glibc.shutdown(descriptor, how) }

    /// Waits (blocking) until the socket is readable or writable, or `milliseconds` pass (-1: no limit).
    func poll(readable: Bool, writable: Bool, milliseconds: Int32) {
        var entry = pollfd(fd: descriptor, events: Int16((readable ? POLLIN : 0) | (writable ? POLLOUT : 0)), revents: 0)
        _ = Glibc.poll(&entry, 1, milliseconds)
    }

    /// Closes the descriptor.
    func close() { _ = Glibc.close(descriptor) }

    /// The `URLError` for a connect or I/O failure with `errno` `code`.
    static func error(for code: Int32, connecting: Bool, url: URL?) -> URLError {
        let reason = String(cString: strerror(code))
        switch code {
        case ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, EADDRNOTAVAIL:
            return URLError(.cannotConnectToHost, url: url, description: "Could not connect to the server (\(reason)).")
        case ETIMEDOUT:
            return URLError(.timedOut, url: url, description: "The connection timed out (\(reason)).")
        default:
            return URLError(connecting ? .cannotConnectToHost : .networkConnectionLost, url: url,
                            description: connecting ? "Could not connect to the server (\(reason))." : "The connection was lost (\(reason)).")
        }
    }
}
