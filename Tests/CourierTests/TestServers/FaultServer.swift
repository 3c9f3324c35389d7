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
