import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One request as the ``FaultServer`` read it.
struct FaultRequest: Sendable {
    var method: String
    /// The request target as sent (path and query).
    var target: String
    /// Header fields in the order received, names as sent.
    var headers: [(name: String, value: String)]
    /// The body (at most ``FaultServer/keptBodyLimit`` bytes are kept; see ``bodyLength``).
    var body: Data
    /// How many body bytes arrived.
    var bodyLength: Int
    /// ``StreamHash`` of every body byte.
    var bodyHash: UInt64

    /// The path without the query.
    var path: String { String(target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "") }

    /// The first value of `name` (case-insensitive).
    func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// A response the ``FaultServer`` writes.
struct FaultResponse: Sendable {
    var status: Int
    var reason: String = "OK"
    var headers: [(String, String)] = []
    var body: Data = Data()

    /// A response with `Content-Length` set from `body`.
    static func ok(_ body: Data, status: Int = 200, reason: String = "OK", headers: [(String, String)] = []) -> FaultResponse {
        FaultResponse(status: status, reason: reason, headers: headers + [("Content-Length", "\(body.count)")], body: body)
    }
}

/// A 64-bit hash fed in pieces (FNV-1a over 8-byte little-endian words, the last partial word
/// zero-padded, then the length mixed in): cheap enough for 64 MiB in a debug build, and the same
/// whatever the piece boundaries are.
struct StreamHash: Sendable {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325
    private(set) var count = 0
    private var pending: UInt64 = 0
    private var pendingCount = 0

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        var index = 0
        let total = bytes.count
        while pendingCount != 0, index < total {
            pending |= UInt64(base.load(fromByteOffset: index, as: UInt8.self)) << (8 * UInt64(pendingCount))
            pendingCount += 1
            index += 1
            if pendingCount == 8 { mix(pending); pending = 0; pendingCount = 0 }
        }
        while total - index >= 8 {
            mix(UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self)))
            index += 8
        }
        while index < total {
            pending |= UInt64(base.load(fromByteOffset: index, as: UInt8.self)) << (8 * UInt64(pendingCount))
            pendingCount += 1
            index += 1
        }
        count += total
    }

    mutating func update(_ data: Data) { data.withUnsafeBytes { update($0) } }

    private mutating func mix(_ word: UInt64) {
        value = (value ^ word) &* 0x0000_0100_0000_01b3
    }

    /// The hash of everything fed so far.
    var finalValue: UInt64 {
        var copy = self
        if copy.pendingCount > 0 { copy.mix(copy.pending) }
        copy.mix(UInt64(count))
        return copy.value
    }

    static func of(_ data: Data) -> UInt64 {
        var hash = StreamHash()
        hash.update(data)
        return hash.finalValue
    }
}

/// An in-process HTTP/1.1 server on `127.0.0.1` (an ephemeral port) whose answers are scripted per
/// path: well-formed responses, and the faults a real network produces — a body cut short, a
/// malformed status line or header, a server that never answers, a reset connection, a slow drip, a
/// chunked body, compressed bodies, Basic and Digest authentication, an upload sink and an echo.
///
/// Plain sockets, one thread per connection. Every blocking call is bounded (receive and send time
/// out after 20 s, stalls end when the server stops), and ``stop()`` closes everything.
final class FaultServer: @unchecked Sendable {
    /// What the server does with a request for one path.
    enum Route: Sendable {
        /// A well-formed response; the connection stays open for the next request.
        case respond(FaultResponse)
        /// Computes the response from the request.
        case handler(@Sendable (FaultRequest) -> FaultResponse)
        /// Headers declaring `declaredLength` body bytes, then only `body`, then the connection closes.
        case truncated(body: Data, declaredLength: Int)
        /// Writes these bytes as the whole response and closes.
        case raw(Data)
        /// Reads the request and sends nothing for `seconds` (or until the server stops), then closes.
        case stall(seconds: Double)
        /// Sends `head` (may be empty) and then resets the connection (SO_LINGER 0).
        case reset(after: Data)
        /// Sends a `Content-Length` response whose body goes out one byte every `interval` seconds.
        case drip(body: Data, interval: Double)
        /// A chunked response, one chunk per piece, `delay` seconds between chunks.
        case chunked(pieces: [Data], delay: Double, headers: [(String, String)])
        /// 401 with `WWW-Authenticate: Basic realm="…"` unless the request carries these credentials.
        case basicAuth(realm: String, user: String, password: String, body: Data)
        /// 401 with `WWW-Authenticate: Digest realm="…", qop="auth", algorithm=MD5, nonce="…"` (a
        /// fresh nonce each time) unless the request carries a Digest authorization for these
        /// credentials with a nonce this server issued (RFC 7616, ``DigestAuthorization``).
        case digestAuth(realm: String, user: String, password: String, body: Data)
        /// Reads the body, counting and hashing it; answers `count hash` as text.
        case sink
        /// Answers with a JSON object: method, target, headers (lower-cased names), body (base64).
        case echo
        /// Full control: the closure writes raw bytes through the writer and returns whether the
        /// connection may carry another request.
        case custom(@Sendable (FaultRequest, FaultWriter) -> Bool)
    }

    /// Request bodies longer than this are counted and hashed but not kept.
    static let keptBodyLimit = 1 << 20

    let port: Int
    private let listener: Int32
    private let lock = NSLock()
    private var routes: [String: Route]
    private var fallback: Route
    private var connections: Set<Int32> = []
    private var log: [FaultRequest] = []
    private var stopped = false
    private var acceptThreadDone = false
    private var listenerClosed = false
    private var connectionCount = 0
    private var digestNonces: Set<String> = []

    /// A server listening on 127.0.0.1 (an ephemeral port), answering `routes` by path and
    /// `fallback` for every other path.
    init(routes: [String: Route] = [:], fallback: Route = .respond(.ok(Data("not scripted\n".utf8), status: 404, reason: "Not Found"))) throws {
        self.routes = routes
        self.fallback = fallback
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw FaultServerError("socket() failed: \(errno)") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            close(fd)
            throw FaultServerError("bind/listen on 127.0.0.1 failed: \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "fault-server-accept"
        thread.start()
    }

    deinit { stop() }

    /// `http://127.0.0.1:<port><path>`.
    func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path.hasPrefix("/") ? path : "/" + path)")!
    }

    /// Scripts (or re-scripts) `path`.
    func setRoute(_ path: String, _ route: Route) {
        lock.withLock { routes[path] = route }
    }

    /// Every request read so far, in arrival order.
    var requests: [FaultRequest] { lock.withLock { log } }

    /// The requests for `path`, in arrival order.
    func requests(for path: String) -> [FaultRequest] { requests.filter { $0.path == path } }

    /// How many TCP connections were accepted.
    var acceptedConnections: Int { lock.withLock { connectionCount } }

    /// Stops accepting, closes every connection and waits (bounded) for the accept thread to end.
    ///
    /// Sockets are shut down and closed only while holding the lock, so a descriptor number that
    /// was closed and handed to another server's socket is never touched here.
    func stop() {
        lock.withLock {
            if stopped { return }
            stopped = true
            if !listenerClosed { shutdown(listener, Int32(SHUT_RDWR)) }
            for fd in connections { shutdown(fd, Int32(SHUT_RDWR)) }
        }
        let deadline = Date().addingTimeInterval(5)
        while !lock.withLock({ acceptThreadDone }), Date() < deadline { usleep(2_000) }
    }

    private var isStopped: Bool { lock.withLock { stopped } }
    fileprivate var isStoppedForWriters: Bool { isStopped }

    // MARK: Accepting

    private func acceptLoop() {
        defer {
            lock.withLock {
                close(listener)
                listenerClosed = true
                acceptThreadDone = true
            }
        }
        while !isStopped {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                return
            }
            let registered: Bool = lock.withLock {
                if stopped { return false }
                connections.insert(fd)
                connectionCount += 1
                return true
            }
            guard registered else { close(fd); return }
            var timeout = timeval(tv_sec: 20, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let thread = Thread { [self] in serve(FaultConnection(fd: fd)) }
            thread.name = "fault-server-connection"
            thread.start()
        }
    }

    private func serve(_ connection: FaultConnection) {
        defer {
            lock.withLock {
                connections.remove(connection.fd)
                close(connection.fd)
            }
        }
        while !isStopped {
            guard let head = connection.readHead() else { return }
            let route = lock.withLock { routes[head.path] ?? fallback }
            // A sink streams the body straight into its hash; other routes keep up to the limit.
            guard var request = connection.readBody(of: head) else { return }
            request.body = request.body.prefix(Self.keptBodyLimit)
            lock.withLock { log.append(request) }
            if !respond(to: request, route: route, on: connection) { return }
            if request.header("Connection")?.lowercased() == "close" { return }
        }
    }

    /// A 401 asking for `challenge` (the `WWW-Authenticate` value), with a short text body.
    private static func authenticationRequired(_ challenge: String) -> FaultResponse {
        .ok(Data("authentication required\n".utf8), status: 401, reason: "Unauthorized",
            headers: [("WWW-Authenticate", challenge), ("Content-Type", "text/plain")])
    }

    /// Answers `request`; returns whether the connection may carry another request.
    private func respond(to request: FaultRequest, route: Route, on connection: FaultConnection) -> Bool {
        switch route {
        case .respond(let response):
            return connection.send(response, method: request.method)
        case .handler(let make):
            return connection.send(make(request), method: request.method)
        case .truncated(let body, let declaredLength):
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: \(declaredLength)\r\n\r\n"
            _ = connection.write(Data(head.utf8) + body)
            connection.drainBriefly()
            return false
        case .raw(let bytes):
            _ = connection.write(bytes)
            connection.drainBriefly()
            return false
        case .stall(let seconds):
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline, !isStopped { usleep(20_000) }
            return false
        case .reset(let head):
            if !head.isEmpty { _ = connection.write(head) }
            usleep(50_000)
            var hardClose = linger(l_onoff: 1, l_linger: 0)
            setsockopt(connection.fd, SOL_SOCKET, SO_LINGER, &hardClose, socklen_t(MemoryLayout<linger>.size))
            return false
        case .drip(let body, let interval):
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: \(body.count)\r\n\r\n"
            guard connection.write(Data(head.utf8)) else { return false }
            for byte in body {
                if isStopped { return false }
                usleep(useconds_t(interval * 1_000_000))
                guard connection.write(Data([byte])) else { return false }
            }
            return true
        case .chunked(let pieces, let delay, let headers):
            var head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            head += "\r\n"
            guard connection.write(Data(head.utf8)) else { return false }
            for piece in pieces where !piece.isEmpty {
                if delay > 0 { usleep(useconds_t(delay * 1_000_000)) }
                if isStopped { return false }
                guard connection.write(Data(String(piece.count, radix: 16).utf8) + Data("\r\n".utf8) + piece + Data("\r\n".utf8)) else { return false }
            }
            return connection.write(Data("0\r\n\r\n".utf8))
        case .basicAuth(let realm, let user, let password, let body):
            let expected = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
            if request.header("Authorization") == expected {
                return connection.send(.ok(body, headers: [("Content-Type", "text/plain")]), method: request.method)
            }
            return connection.send(Self.authenticationRequired("Basic realm=\"\(realm)\""), method: request.method)
        case .digestAuth(let realm, let user, let password, let body):
            let issued: (String) -> Bool = { nonce in self.lock.withLock { self.digestNonces.contains(nonce) } }
            if let authorization = request.header("Authorization").flatMap(DigestAuthorization.init),
               authorization.verifies(method: request.method, target: request.target, realm: realm, user: user,
                                      password: password, issued: issued) {
                return connection.send(.ok(body, headers: [("Content-Type", "text/plain")]), method: request.method)
            }
            let nonce = String(UInt64.random(in: .min ... .max), radix: 16) + String(UInt64.random(in: .min ... .max), radix: 16)
            lock.withLock { _ = digestNonces.insert(nonce) }
            let challenge = "Digest realm=\"\(realm)\", qop=\"auth\", algorithm=MD5, nonce=\"\(nonce)\""
            return connection.send(Self.authenticationRequired(challenge), method: request.method)
        case .sink:
            let text = "\(request.bodyLength) \(String(request.bodyHash, radix: 16))"
            return connection.send(.ok(Data(text.utf8), headers: [("Content-Type", "text/plain")]), method: request.method)
        case .custom(let body):
            let writer = FaultWriter(connection: connection, server: self)
            let keepOpen = body(request, writer)
            if !keepOpen { connection.drainBriefly() }
            return keepOpen
        case .echo:
            var headers: [String: String] = [:]
            for (name, value) in request.headers {
                let key = name.lowercased()
                headers[key] = headers[key].map { "\($0), \(value)" } ?? value
            }
            let object: [String: Any] = [
                "method": request.method, "target": request.target, "headers": headers,
                "body": request.body.base64EncodedString(), "bodyLength": request.bodyLength,
            ]
            let json = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
            return connection.send(.ok(json, headers: [("Content-Type", "application/json")]), method: request.method)
        }
    }
}

/// What a ``FaultServer/Route/custom(_:)`` script writes with.
final class FaultWriter: @unchecked Sendable {
    private let connection: FaultConnection
    private weak var server: FaultServer?

    fileprivate init(connection: FaultConnection, server: FaultServer) {
        self.connection = connection
        self.server = server
    }

    /// Writes raw bytes; false when the peer went away.
    @discardableResult
    func write(_ data: Data) -> Bool { connection.write(data) }

    /// Writes a status line and headers (nothing else).
    @discardableResult
    func writeHead(status: Int, reason: String = "OK", headers: [(String, String)]) -> Bool {
        var head = "HTTP/1.1 \(status) \(reason)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        return write(Data((head + "\r\n").utf8))
    }

    /// Writes a whole response.
    @discardableResult
    func send(_ response: FaultResponse, method: String = "GET") -> Bool { connection.send(response, method: method) }

    /// Waits `seconds`, or less when the server stops or the peer closes the connection.
    func pause(_ seconds: Double) {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline, !(server?.isStoppedForWriters ?? true), !connection.peerClosed() { usleep(10_000) }
    }

    /// Resets the connection (SO_LINGER 0) when the script returns.
    func resetOnClose() { connection.setHardClose() }

    /// Reads what the peer sends after the request (a WebSocket client's frames) until at least
    /// `count` bytes arrived, the peer closed, or `seconds` passed.
    func read(atLeast count: Int, within seconds: Double) -> Data {
        connection.take(atLeast: count, until: Date().addingTimeInterval(seconds))
    }
}

struct FaultServerError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The decoded JSON of an ``FaultServer/Route/echo`` answer.
struct EchoedRequest: Sendable {
    var method: String
    var target: String
    var headers: [String: String]
    var body: Data
    var bodyLength: Int

    init(json: Data) throws {
        guard let object = try JSONSerialization.jsonObject(with: json) as? [String: Any] else {
            throw FaultServerError("the echo is not a JSON object: \(String(decoding: json.prefix(200), as: UTF8.self))")
        }
        method = object["method"] as? String ?? ""
        target = object["target"] as? String ?? ""
        headers = object["headers"] as? [String: String] ?? [:]
        body = (object["body"] as? String).flatMap { Data(base64Encoded: $0) } ?? Data()
        bodyLength = object["bodyLength"] as? Int ?? -1
    }

    /// The value of header `name` (any case).
    func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// One accepted socket and what was read from it but not yet used.
fileprivate final class FaultConnection {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(fd: Int32) { self.fd = fd }

    /// What arrived beyond what was read, after reading until it holds `count` bytes, the peer
    /// closed, or `deadline` passed.
    func take(atLeast count: Int, until deadline: Date) -> Data {
        while buffer.count < count, Date() < deadline, fill() {}
        defer { buffer.removeAll() }
        return Data(buffer)
    }

    /// Reads more bytes into the buffer; false at EOF, on an error or a timeout.
    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return false }
        buffer.append(contentsOf: chunk[0..<count])
        return true
    }

    /// The request line and headers (body not read yet); nil when the peer closed.
    func readHead() -> FaultRequest? {
        while true {
            if let end = headEnd() {
                let text = String(decoding: buffer[0..<end], as: UTF8.self)
                buffer.removeFirst(end + 4)
                var lines = text.components(separatedBy: "\r\n")
                let requestLine = lines.removeFirst().split(separator: " ")
                guard requestLine.count >= 2 else { return nil }
                var headers: [(name: String, value: String)] = []
                for line in lines {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers.append((String(line[..<colon]).trimmingCharacters(in: .whitespaces),
                                    String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)))
                }
                return FaultRequest(method: String(requestLine[0]), target: String(requestLine[1]), headers: headers,
                                    body: Data(), bodyLength: 0, bodyHash: StreamHash().finalValue)
            }
            if buffer.count > 1 << 20 { return nil }
            guard fill() else { return nil }
        }
    }

    private func headEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4) where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index
        }
        return nil
    }

    /// Reads the body `head` announces (Content-Length or chunked), hashing all of it.
    func readBody(of head: FaultRequest) -> FaultRequest? {
        var request = head
        var hash = StreamHash()
        var kept = Data()
        func take(_ count: Int) {
            buffer.withUnsafeBytes { raw in
                let slice = UnsafeRawBufferPointer(rebasing: raw[0..<count])
                hash.update(slice)
                if kept.count < FaultServer.keptBodyLimit { kept.append(contentsOf: slice.prefix(FaultServer.keptBodyLimit - kept.count)) }
            }
            buffer.removeFirst(count)
        }
        if head.header("Transfer-Encoding")?.lowercased().contains("chunked") == true {
            while true {
                guard let size = readLine().flatMap({ Int($0.split(separator: ";").first.map(String.init)?.trimmingCharacters(in: .whitespaces) ?? "", radix: 16) }) else { return nil }
                if size == 0 {
                    // Trailers end with an empty line.
                    while let line = readLine(), !line.isEmpty {}
                    break
                }
                var remaining = size
                while remaining > 0 {
                    if buffer.isEmpty, !fill() { return nil }
                    let count = min(remaining, buffer.count)
                    take(count)
                    remaining -= count
                }
                guard readLine() != nil else { return nil }
            }
        } else if let length = head.header("Content-Length").flatMap({ Int($0) }), length > 0 {
            var remaining = length
            while remaining > 0 {
                if buffer.isEmpty, !fill() { return nil }
                let count = min(remaining, buffer.count)
                take(count)
                remaining -= count
            }
        }
        request.body = kept
        request.bodyLength = hash.count
        request.bodyHash = hash.finalValue
        return request
    }

    private func readLine() -> String? {
        while true {
            if let index = buffer.indices.dropLast().first(where: { buffer[$0] == 13 && buffer[$0 + 1] == 10 }) {
                let line = String(decoding: buffer[0..<index], as: UTF8.self)
                buffer.removeFirst(index + 2)
                return line
            }
            guard fill() else { return nil }
        }
    }

    /// Writes everything; false when the peer went away.
    func write(_ data: Data) -> Bool {
        data.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return true }
            var offset = 0
            while offset < raw.count {
                let sent = socketSend(fd, base + offset, raw.count - offset)
                if sent < 0, errno == EINTR { continue }
                guard sent > 0 else { return false }
                offset += sent
            }
            return true
        }
    }

    /// Writes a whole response (no body for HEAD).
    func send(_ response: FaultResponse, method: String) -> Bool {
        var head = "HTTP/1.1 \(response.status) \(response.reason)\r\n"
        for (name, value) in response.headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        return write(Data(head.utf8) + (method == "HEAD" ? Data() : response.body))
    }

    /// Whether the peer closed its side (a non-blocking peek sees EOF or an error).
    func peerClosed() -> Bool {
        var byte: UInt8 = 0
        let result = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if result == 0 { return true }
        if result < 0 { return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR }
        return false
    }

    /// Makes the coming close send a reset (SO_LINGER with a zero timeout).
    func setHardClose() {
        hardClose = true
        var value = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &value, socklen_t(MemoryLayout<linger>.size))
    }

    private(set) var hardClose = false

    /// Lets the peer read what was written before the socket closes (a close with unread input
    /// would otherwise reset the connection).
    func drainBriefly() {
        if hardClose { return }
        shutdown(fd, Int32(SHUT_WR))
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var scratch = [UInt8](repeating: 0, count: 4096)
        while scratch.withUnsafeMutableBytes({ recv(fd, $0.baseAddress, $0.count, 0) }) > 0 {}
    }
}

/// `send(2)` without SIGPIPE (a free function: `FaultConnection.send` would shadow the C name).
private func socketSend(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    send(fd, bytes, count, Int32(MSG_NOSIGNAL))
}
