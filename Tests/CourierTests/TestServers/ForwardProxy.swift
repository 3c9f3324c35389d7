import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A small in-process proxy on 127.0.0.1 for the proxy tests, that records what it was asked:
///
/// - ``Kind/http``: an HTTP forward proxy. Absolute-form requests (`GET http://host:port/path`) are
///   sent on in origin form with `Connection: close` and an `X-Courier-Proxy: 1` field (so the origin
///   can tell it came through the proxy); `CONNECT host:port` opens a tunnel.
/// - ``Kind/socks5``: a SOCKS5 proxy (no authentication, `CONNECT` only; IPv4 or host name).
/// - ``Kind/relay(port:)``: plain TCP to 127.0.0.1:`port`, which makes a server appear on a chosen
///   port (``init(_:port:hosts:credentials:)``).
///
/// It only ever connects to 127.0.0.1: a target must be an IPv4 loopback literal, `localhost`, or
/// a name listed in `hosts` (so a test can use a host name that resolves nowhere but here). Other
/// targets get 502 (SOCKS: "host unreachable").
///
/// One thread per direction; blocking sockets with short receive timeouts, so ``stop()`` ends every
/// connection within a second.
final class ForwardProxy: @unchecked Sendable {
    enum Kind: Sendable {
        case http
        case socks5
        case relay(port: Int)
    }

    /// One request the proxy handled.
    struct Request: Sendable {
        /// `GET`, `CONNECT`… for HTTP; `SOCKS5` for SOCKS; `RELAY` for the relay.
        var method: String
        /// The request target as sent (`http://…`, `host:port`), or the SOCKS destination `host:port`.
        var target: String
        /// Header fields as sent (HTTP only).
        var headers: [(name: String, value: String)]

        func header(_ name: String) -> String? {
            headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
    }

    let port: Int
    let kind: Kind
    private let listener: Int32
    private let hosts: [String: String]
    private let credentials: (user: String, password: String)?
    private let state = Locked<(stopped: Bool, sockets: [Int32], requests: [Request], connections: Int)>((false, [], [], 0))

    /// The realm of the `Proxy-Authenticate` challenge.
    static let realm = "Courier Proxy"

    /// A proxy listening on 127.0.0.1:`port` (0: an ephemeral port). `hosts` maps extra host names
    /// to loopback addresses. With `credentials`, an HTTP proxy answers requests without matching
    /// Basic `Proxy-Authorization` with 407 (realm ``realm``).
    init(_ kind: Kind, port: Int = 0, hosts: [String: String] = [:], credentials: (user: String, password: String)? = nil) throws {
        self.kind = kind
        self.hosts = hosts
        self.credentials = credentials
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw FaultServerError("socket() failed") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 64) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else {
            let code = errno
            close(fd)
            throw FaultServerError("could not listen on 127.0.0.1:\(port): \(String(cString: strerror(code)))")
        }
        listener = fd
        self.port = Int(UInt16(bigEndian: address.sin_port))
        Self.setReceiveTimeout(fd)
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "forward-proxy"
        thread.start()
    }

    deinit { stop() }

    /// Every request handled so far, in order.
    var requests: [Request] { state.current.requests }
    /// How many connections were accepted.
    var connections: Int { state.current.connections }

    /// Closes the listener and every connection.
    func stop() {
        // Only the first call touches the listener: the accept loop closes it after a stop, and its
        // descriptor number may by then belong to another test's socket.
        let sockets: [Int32]? = state.withLock { current in
            if current.stopped { return nil }
            current.stopped = true
            defer { current.sockets = [] }
            return current.sockets
        }
        guard let sockets else { return }
        for fd in sockets { shutdown(fd, Int32(SHUT_RDWR)) }
        shutdown(listener, Int32(SHUT_RDWR))
    }

    private var stopped: Bool { state.current.stopped }

    private static func setReceiveTimeout(_ fd: Int32) {
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var send = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Tracks a socket so ``stop()`` shuts it down; false (and the socket is closed) once stopped.
    private func track(_ fd: Int32) -> Bool {
        let tracked: Bool = state.withLock { current in
            if current.stopped { return false }
            current.sockets.append(fd)
            return true
        }
        if !tracked { close(fd) }
        return tracked
    }

    private func untrackAndClose(_ fd: Int32) {
        state.withLock { $0.sockets.removeAll { $0 == fd } }
        close(fd)
    }

    private func record(_ request: Request) {
        state.withLock { $0.requests.append(request) }
    }

    private func acceptLoop() {
        while !stopped {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
                break
            }
            guard track(client) else { break }
            state.withLock { $0.connections += 1 }
            Self.setReceiveTimeout(client)
            let thread = Thread { [self] in
                serve(client)
                untrackAndClose(client)
            }
            thread.name = "forward-proxy-connection"
            thread.start()
        }
        close(listener)
    }

    private func serve(_ client: Int32) {
        switch kind {
        case .http: serveHTTP(client)
        case .socks5: serveSOCKS(client)
        case .relay(let port):
            record(Request(method: "RELAY", target: "127.0.0.1:\(port)", headers: []))
            guard let upstream = connectLoopback(port: port) else { return }
            tunnel(client, upstream, initial: Data())
        }
    }

    // MARK: HTTP

    private func serveHTTP(_ client: Int32) {
        guard let (head, rest) = readHead(client) else { return }
        let lines = head.components(separatedBy: "\r\n")
        let parts = (lines.first ?? "").split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard parts.count == 3 else {
            respond(client, status: "400 Bad Request")
            return
        }
        let (method, target) = (parts[0], parts[1])
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        record(Request(method: method, target: target, headers: headers))
        if let credentials {
            let expected = "Basic " + Data("\(credentials.user):\(credentials.password)".utf8).base64EncodedString()
            let given = headers.first { $0.name.caseInsensitiveCompare("Proxy-Authorization") == .orderedSame }?.value
            guard given == expected else {
                let body = "proxy authentication required\n"
                _ = send(client, Data(("HTTP/1.1 407 Proxy Authentication Required\r\n"
                    + "Proxy-Authenticate: Basic realm=\"\(Self.realm)\"\r\nContent-Type: text/plain\r\n"
                    + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body).utf8))
                return
            }
        }

        if method == "CONNECT" {
            let pieces = target.split(separator: ":")
            guard pieces.count == 2, let port = Int(pieces[1]), let upstream = connect(host: String(pieces[0]), port: port) else {
                respond(client, status: "502 Bad Gateway")
                return
            }
            guard send(client, Data("HTTP/1.1 200 Connection established\r\n\r\n".utf8)) else {
                untrackAndClose(upstream)
                return
            }
            tunnel(client, upstream, initial: rest)
            return
        }
        guard let components = URLComponents(string: target), components.scheme?.lowercased() == "http",
              let host = components.host else {
            respond(client, status: "400 Bad Request")
            return
        }
        guard let upstream = connect(host: host, port: components.port ?? 80) else {
            respond(client, status: "502 Bad Gateway")
            return
        }
        var path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { path += "?" + query }
        let dropped: Set<String> = ["proxy-connection", "proxy-authorization", "connection", "keep-alive"]
        var forwarded = "\(method) \(path) HTTP/1.1\r\n"
        for (name, value) in headers where !dropped.contains(name.lowercased()) { forwarded += "\(name): \(value)\r\n" }
        forwarded += "Connection: close\r\nX-Courier-Proxy: 1\r\n\r\n"
        guard send(upstream, Data(forwarded.utf8)) else {
            untrackAndClose(upstream)
            return
        }
        tunnel(client, upstream, initial: rest)
    }

    /// Reads up to the end of the request head; returns the head and the bytes after it.
    private func readHead(_ fd: Int32) -> (String, Data)? {
        var data = Data()
        let end = Data("\r\n\r\n".utf8)
        let deadline = Date().addingTimeInterval(10)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !stopped, Date() < deadline, data.count < 64 << 10 {
            if let range = data.range(of: end) {
                return (String(decoding: data[..<range.lowerBound], as: UTF8.self), Data(data[range.upperBound...]))
            }
            let count = recv(fd, &buffer, buffer.count, 0)
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { continue }
            if count <= 0 { return nil }
            data.append(contentsOf: buffer[0..<count])
        }
        return nil
    }

    private func respond(_ fd: Int32, status: String) {
        _ = send(fd, Data("HTTP/1.1 \(status)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))
    }

    // MARK: SOCKS5

    private func serveSOCKS(_ client: Int32) {
        guard let greeting = readExactly(client, 2), greeting[0] == 5,
              readExactly(client, Int(greeting[1])) != nil,
              send(client, Data([5, 0])),
              let request = readExactly(client, 4), request[0] == 5 else { return }
        let host: String
        switch request[3] {
        case 1:
            guard let address = readExactly(client, 4) else { return }
            host = address.map(String.init).joined(separator: ".")
        case 3:
            guard let length = readExactly(client, 1), let name = readExactly(client, Int(length[0])) else { return }
            host = String(decoding: name, as: UTF8.self)
        default:
            _ = send(client, Data([5, 8, 0, 1, 0, 0, 0, 0, 0, 0])) // address type not supported
            return
        }
        guard let portBytes = readExactly(client, 2) else { return }
        let port = Int(portBytes[0]) << 8 | Int(portBytes[1])
        record(Request(method: "SOCKS5", target: "\(host):\(port)", headers: []))
        guard request[1] == 1 else {
            _ = send(client, Data([5, 7, 0, 1, 0, 0, 0, 0, 0, 0])) // command not supported
            return
        }
        guard let upstream = connect(host: host, port: port) else {
            _ = send(client, Data([5, 4, 0, 1, 0, 0, 0, 0, 0, 0])) // host unreachable
            return
        }
        guard send(client, Data([5, 0, 0, 1, 127, 0, 0, 1, UInt8(port >> 8), UInt8(port & 0xff)])) else {
            untrackAndClose(upstream)
            return
        }
        tunnel(client, upstream, initial: Data())
    }

    private func readExactly(_ fd: Int32, _ count: Int) -> Data? {
        var data = Data()
        let deadline = Date().addingTimeInterval(10)
        var buffer = [UInt8](repeating: 0, count: max(count, 1))
        while data.count < count, !stopped, Date() < deadline {
            let got = recv(fd, &buffer, count - data.count, 0)
            if got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { continue }
            if got <= 0 { return nil }
            data.append(contentsOf: buffer[0..<got])
        }
        return data.count == count ? data : nil
    }

    // MARK: Connecting and tunnelling

    /// A connection to `host`:`port` if `host` is a loopback address (directly, `localhost` or through
    /// ``hosts``); `nil` otherwise or when nothing listens.
    private func connect(host: String, port: Int) -> Int32? {
        let name = host.hasPrefix("[") ? host : host.lowercased()
        let address = hosts[name] ?? (name == "localhost" ? "127.0.0.1" : name)
        guard address.hasPrefix("127."), inet_addr(address) != INADDR_NONE, (1...65535).contains(port) else { return nil }
        return connectLoopback(port: port, address: address)
    }

    private func connectLoopback(port: Int, address: String = "127.0.0.1") -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var target = sockaddr_in()
        target.sin_family = sa_family_t(AF_INET)
        target.sin_port = UInt16(port).bigEndian
        target.sin_addr.s_addr = inet_addr(address)
        let connected = withUnsafePointer(to: &target) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { systemConnect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else {
            close(fd)
            return nil
        }
        guard track(fd) else { return nil }
        Self.setReceiveTimeout(fd)
        return fd
    }

    /// Copies both ways until either side ends; `initial` goes to `upstream` first. Closes `upstream`.
    private func tunnel(_ client: Int32, _ upstream: Int32, initial: Data) {
        defer { untrackAndClose(upstream) }
        if !initial.isEmpty, !send(upstream, initial) { return }
        let done = DispatchSemaphore(value: 0)
        let toServer = Thread { [self] in
            pump(from: client, to: upstream)
            done.signal()
        }
        toServer.start()
        pump(from: upstream, to: client)
        // The other direction ends once both sockets are shut down (at most one receive timeout).
        _ = done.wait(timeout: .now() + 5)
    }

    private func pump(from source: Int32, to target: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while !stopped {
            let count = recv(source, &buffer, buffer.count, 0)
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { continue }
            if count <= 0 { break }
            if !send(target, Data(buffer[0..<count])) { break }
        }
        shutdown(source, Int32(SHUT_RDWR))
        shutdown(target, Int32(SHUT_RDWR))
    }

    private func send(_ fd: Int32, _ data: Data) -> Bool {
        data.withUnsafeBytes { raw in
            var sent = 0
            while sent < raw.count {
                let written = systemSend(fd, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return false }
                sent += written
            }
            return true
        }
    }
}

// The POSIX calls under names the proxy's own methods do not shadow.
private func systemConnect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    connect(fd, address, length)
}

private func systemSend(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int, _ flags: Int32) -> Int {
    send(fd, bytes, count, flags)
}
