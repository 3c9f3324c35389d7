import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The TCP side of an SSH connection: name resolution (blocking, so run off the event loop) and a
/// non-blocking connect the loop completes when the socket becomes writable.
enum SSHSocket {
    /// One address a host name resolved to.
    struct Address: @unchecked Sendable {
        var storage = sockaddr_storage()
        var length: socklen_t = 0
        var family: Int32 = AF_INET
    }

    /// The addresses of `host` for TCP `port`, in the resolver's order.
    static func resolve(host: String, port: Int, url: URL?) -> Result<[Address], URLError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_ADDRCONFIG
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            let reason = status == EAI_SYSTEM ? String(cString: strerror(errno)) : String(cString: gai_strerror(status))
            return .failure(URLError(.cannotFindHost, url: url, description: "The host \(host) could not be found: \(reason)."))
        }
        defer { freeaddrinfo(first) }
        var addresses: [Address] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if let source = entry.pointee.ai_addr, entry.pointee.ai_addrlen <= socklen_t(MemoryLayout<sockaddr_storage>.size) {
                var address = Address()
                address.family = entry.pointee.ai_family
                address.length = entry.pointee.ai_addrlen
                withUnsafeMutableBytes(of: &address.storage) { target in
                    if let base = target.baseAddress { memcpy(base, source, Int(entry.pointee.ai_addrlen)) }
                }
                addresses.append(address)
            }
            cursor = entry.pointee.ai_next
        }
        guard !addresses.isEmpty else {
            return .failure(URLError(.cannotFindHost, url: url, description: "The host \(host) has no usable address."))
        }
        return .success(addresses)
    }

    /// An `errno` value as an error.
    struct SystemError: Error {
        var code: Int32
    }

    /// A non-blocking socket connecting to `address`: the descriptor, or the `errno` of the failure.
    static func startConnect(to address: Address) -> Result<Int32, SystemError> {
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .failure(SystemError(code: errno)) }
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var storage = address.storage
        let result = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, address.length) }
        }
        if result == 0 || errno == EINPROGRESS { return .success(fd) }
        let code = errno
        close(fd)
        return .failure(SystemError(code: code))
    }

    /// The outcome of a non-blocking connect once the socket polled writable: 0 or an `errno`.
    static func connectError(of fd: Int32) -> Int32 {
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length) == 0 else { return errno }
        return code
    }

    /// The error for a connect that failed with `code`.
    static func connectFailure(_ code: Int32, host: String, port: Int, url: URL?) -> URLError {
        let reason = String(cString: strerror(code))
        switch code {
        case ETIMEDOUT:
            return URLError(.timedOut, url: url, description: "Connecting to \(host) port \(port) timed out.")
        case ENETUNREACH, ENETDOWN:
            return URLError(.notConnectedToInternet, url: url, description: "\(host) port \(port) cannot be reached: \(reason).")
        default:
            return URLError(.cannotConnectToHost, url: url, description: "Could not connect to \(host) port \(port): \(reason).")
        }
    }

    /// The numeric address and port at one end of a connected socket.
    static func endpoint(of fd: Int32, peer: Bool) -> (address: String, port: Int)? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                peer ? getpeername(fd, $0, &length) == 0 : getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else { return nil }
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
        let status = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getnameinfo($0, length, &host, socklen_t(host.count), &service, socklen_t(service.count), NI_NUMERICHOST | NI_NUMERICSERV)
            }
        }
        guard status == 0 else { return nil }
        func text(_ characters: [CChar]) -> String {
            String(decoding: characters.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return (text(host), Int(text(service)) ?? 0)
    }
}
