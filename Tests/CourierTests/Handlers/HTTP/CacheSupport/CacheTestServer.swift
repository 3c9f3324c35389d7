import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One request as ``CacheTestServer`` read it.
struct CacheTestRequest: Sendable {
    /// The method, as sent.
    var method: String
    /// The path without the query.
    var path: String
    /// Header fields keyed by lowercased name (repeated fields joined with `,`).
    var headers: [String: String]

    /// The value of `name` (case-insensitive).
    func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// A response ``CacheTestServer`` writes. `Content-Length` is added from the body (none for 304).
struct CacheTestResponse: Sendable {
    var status: Int
    var headers: [(String, String)] = []
    var body = Data()

    /// A 200 with `body` as UTF-8 text and the given headers.
    static func ok(_ body: String, _ headers: [(String, String)] = []) -> CacheTestResponse {
        CacheTestResponse(status: 200, headers: headers + [("Content-Type", "text/plain; charset=utf-8")], body: Data(body.utf8))
    }

    /// A `304 Not Modified` with the given headers.
    static func notModified(_ headers: [(String, String)] = []) -> CacheTestResponse {
        CacheTestResponse(status: 304, headers: headers)
    }
}

/// A tiny HTTP/1.1 server on 127.0.0.1 (a port the system picks) for the cache tests: one thread
/// per connection, keep-alive, requests answered by a script, and a count of the requests seen for
/// each path. Connections idle for more than ``idleLimit`` seconds are closed, so no thread lives
/// forever; ``stop()`` closes everything.
final class CacheTestServer: @unchecked Sendable {
    /// Answers a request; `count` is how many requests for its path the server has seen,
    /// this one included (1 for the first).
    typealias Script = @Sendable (_ request: CacheTestRequest, _ count: Int) -> CacheTestResponse

    /// Seconds a connection may stay silent before the server closes it.
    static let idleLimit = 10

    /// The port the server listens on.
    let port: Int
    private let listener: Int32
    private let script: Script
    private let lock = NSLock()
    private var counts: [String: Int] = [:]
    private var seen: [CacheTestRequest] = []
    private var connections: Set<Int32> = []
    private var stopped = false

    /// Starts a server answering with `script`.
    init(script: @escaping Script) throws {
        self.script = script
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw CacheTestServerError.socket("socket") }
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
            throw CacheTestServerError.socket("bind/listen")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else {
            close(fd)
            throw CacheTestServerError.socket("getsockname")
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "CacheTestServer.accept"
        thread.start()
    }

    deinit { stop() }

    /// The URL of `path` on this server.
    func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)") ?? URL(fileURLWithPath: "/")
    }

    /// How many requests for `path` arrived.
    func count(_ path: String) -> Int {
        lock.lock(); defer { lock.unlock() }
        return counts[path] ?? 0
    }

    /// The requests for `path`, in order.
    func requests(_ path: String) -> [CacheTestRequest] {
        lock.lock(); defer { lock.unlock() }
        return seen.filter { $0.path == path }
    }

    /// Closes the listening socket and every connection.
    func stop() {
        lock.lock()
        let open = connections
        let wasStopped = stopped
        stopped = true
        lock.unlock()
        guard !wasStopped else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    private var isStopped: Bool {
        lock.lock(); defer { lock.unlock() }
        return stopped
    }

    // MARK: Connections

    private func acceptLoop() {
        defer { close(listener) }
        while !isStopped {
            var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { continue }
            var timeout = timeval(tv_sec: Self.idleLimit, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            lock.lock()
            connections.insert(fd)
            lock.unlock()
            let thread = Thread { [self] in serve(fd) }
            thread.name = "CacheTestServer.connection"
            thread.start()
        }
    }

    private func serve(_ fd: Int32) {
        defer {
            lock.lock()
            connections.remove(fd)
            lock.unlock()
            close(fd)
        }
        var buffer = Data()
        while !isStopped {
            guard let (request, rest) = readRequest(fd, buffer: buffer) else { return }
            buffer = rest
            lock.lock()
            let count = (counts[request.path] ?? 0) + 1
            counts[request.path] = count
            seen.append(request)
            lock.unlock()
            let response = script(request, count)
            guard write(response, to: fd, head: request.method == "HEAD") else { return }
        }
    }

    /// Reads one request (head and any `Content-Length` body); `nil` when the connection ends.
    private func readRequest(_ fd: Int32, buffer start: Data) -> (CacheTestRequest, Data)? {
        var buffer = start
        let separator = Data("\r\n\r\n".utf8)
        var headEnd = buffer.range(of: separator)
        while headEnd == nil {
            guard buffer.count < 1 << 20, let more = receive(fd) else { return nil }
            buffer.append(more)
            headEnd = buffer.range(of: separator)
        }
        guard let headEnd, let head = String(data: buffer[buffer.startIndex..<headEnd.lowerBound], encoding: .utf8) else { return nil }
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ")
        guard requestLine.count >= 2 else { return nil }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { $0 + "," + value } ?? value
        }
        var rest = Data(buffer[headEnd.upperBound...])
        let bodyLength = headers["content-length"].flatMap { Int($0) } ?? 0
        while rest.count < bodyLength {
            guard let more = receive(fd) else { return nil }
            rest.append(more)
        }
        let target = String(requestLine[1])
        let path = String(target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        let request = CacheTestRequest(method: String(requestLine[0]), path: path, headers: headers)
        return (request, Data(rest.dropFirst(bodyLength)))
    }

    /// Some bytes from the connection, or `nil` at its end, on an error or after the idle limit.
    private func receive(_ fd: Int32) -> Data? {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Data(chunk[0..<count])
    }

    /// Writes `response`; returns whether it was all sent.
    private func write(_ response: CacheTestResponse, to fd: Int32, head: Bool) -> Bool {
        var text = "HTTP/1.1 \(response.status) \(Self.reason(response.status))\r\n"
        for (name, value) in response.headers { text += "\(name): \(value)\r\n" }
        let hasBody = response.status != 304 && response.status != 204
        if hasBody { text += "Content-Length: \(response.body.count)\r\n" }
        text += "\r\n"
        var bytes = Data(text.utf8)
        if hasBody && !head { bytes.append(response.body) }
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { raw in
                send(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    private static func reason(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 201: return "Created"
        case 204: return "No Content"
        case 304: return "Not Modified"
        case 404: return "Not Found"
        default: return "Status"
        }
    }

    // MARK: Dates

    /// `date` as an HTTP date (IMF-fixdate).
    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    /// `Date: <now>`, the header every scripted response should carry.
    static var dateHeader: (String, String) { ("Date", httpDate(Date())) }
}

/// A socket call failed while starting a ``CacheTestServer``.
enum CacheTestServerError: Error {
    case socket(String)
}
