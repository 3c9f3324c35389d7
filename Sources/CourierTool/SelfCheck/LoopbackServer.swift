import Foundation

/// The small HTTP/1.1 server the embedded default run starts inside the tool, on 127.0.0.1 and a port
/// the system picks, so the run exercises the http handler without any network. Connections are kept
/// alive between requests; ``stop()`` ends them.
///
/// | path | answer |
/// | --- | --- |
/// | `/hello.txt` | ``text``, `text/plain; charset=utf-8` |
/// | `/large.bin` | ``largeSize`` bytes of `application/octet-stream`, sent in 64 KiB writes |
/// | `/data.json` | ``json``, `application/json` |
/// | `/redirect` | 302 to `/hello.txt` |
/// | `/cookies/set` | 302 to `/cookies/echo`, setting the cookie ``cookieName``=``cookieValue`` |
/// | `/cookies/echo` | the request's `Cookie` header, as text (``cookieEcho(_:)``) |
/// | `/auth` | 401 with `WWW-Authenticate: Basic` unless the request authorizes ``user``:``password`` |
/// | anything else | 404 |
final class LoopbackServer: Sendable {
    static let text = "Hello from courier's loopback HTTP server.\n"
    static let largeSize = 4 << 20
    static let json = #"{"server":"courier loopback","paths":["/hello.txt","/large.bin","/data.json","/redirect","/cookies/set","/cookies/echo","/auth"],"ok":true}"# + "\n"
    static let cookieName = "courier-session"
    static let cookieValue = "loopback-c00kie"
    static let user = "user"
    static let password = "secret"
    static let realm = "courier loopback"
    static let authorized = "Welcome, \(user).\n"
    static let unauthorized = "Authorization required.\n"

    /// The body of `/cookies/echo` for a request whose `Cookie` header is `cookie` (nil: none).
    static func cookieEcho(_ cookie: String?) -> String {
        cookie.map { "Cookie: \($0)\n" } ?? "No Cookie header.\n"
    }

    /// The 4 MiB body of `/large.bin`: a fixed pattern.
    static let largeBody: Data = {
        var data = Data(count: largeSize)
        data.withUnsafeMutableBytes { bytes in
            for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: index &* 7 &+ index >> 12) }
        }
        return data
    }()

    private let listener: LoopbackListener

    /// The server's port on 127.0.0.1.
    var port: Int { listener.port }

    /// Starts the server.
    /// - Throws: a `POSIXError` when no socket can be bound on 127.0.0.1.
    init() throws {
        listener = try LoopbackListener(name: "courier loopback HTTP") { connection in
            Self.serve(connection)
        }
    }

    /// Stops accepting, closes the open connections, and waits a bounded time for them.
    @discardableResult
    func stop() -> Bool { listener.stop() }

    /// Connections open right now.
    var openConnections: Int { listener.openConnections }

    // MARK: the protocol

    /// One parsed request head.
    struct Request: Sendable {
        var method: String
        var target: String
        var version: String
        /// Header fields with lowercased names, in arrival order.
        var fields: [(name: String, value: String)]

        func value(_ name: String) -> String? {
            let key = name.lowercased()
            return fields.first { $0.name == key }?.value
        }

        /// The path without its query.
        var path: String {
            String(target.prefix { $0 != "?" && $0 != "#" })
        }

        /// Whether the connection stays open after the response (HTTP/1.1 without `Connection: close`).
        var keepsAlive: Bool {
            let connection = value("connection")?.lowercased() ?? ""
            if version == "HTTP/1.0" { return connection.contains("keep-alive") }
            return !connection.contains("close")
        }
    }

    /// One response; ``body`` is sent in 64 KiB writes.
    struct Response: Sendable {
        var status: Int
        var fields: [(name: String, value: String)] = []
        var body = Data()

        static func text(_ status: Int, _ text: String, fields: [(name: String, value: String)] = []) -> Response {
            Response(status: status, fields: [("Content-Type", "text/plain; charset=utf-8")] + fields, body: Data(text.utf8))
        }

        func value(_ name: String) -> String? {
            fields.first { $0.name.lowercased() == name.lowercased() }?.value
        }
    }

    /// The answer to `request` (pure: the routing table above).
    static func respond(to request: Request) -> Response {
        guard request.method == "GET" || request.method == "HEAD" else {
            return .text(405, "Only GET and HEAD.\n", fields: [("Allow", "GET, HEAD")])
        }
        switch request.path {
        case "/hello.txt":
            return .text(200, text)
        case "/large.bin":
            return Response(status: 200, fields: [("Content-Type", "application/octet-stream")], body: largeBody)
        case "/data.json":
            return Response(status: 200, fields: [("Content-Type", "application/json")], body: Data(json.utf8))
        case "/redirect":
            return .text(302, "Moved to /hello.txt.\n", fields: [("Location", "/hello.txt")])
        case "/cookies/set":
            return .text(302, "Cookie set; see /cookies/echo.\n", fields: [
                ("Set-Cookie", "\(cookieName)=\(cookieValue); Path=/; HttpOnly"),
                ("Location", "/cookies/echo"),
            ])
        case "/cookies/echo":
            return .text(200, cookieEcho(request.value("cookie")), fields: [("Cache-Control", "no-store")])
        case "/auth":
            let expected = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
            if request.value("authorization") == expected {
                return .text(200, authorized, fields: [("Cache-Control", "no-store")])
            }
            return .text(401, unauthorized, fields: [("WWW-Authenticate", "Basic realm=\"\(realm)\"")])
        default:
            return .text(404, "Not found: \(request.path)\n")
        }
    }

    /// Answers requests on `connection` until the client closes it, asks to close, sends something
    /// this server does not take, or stays silent longer than the read timeout.
    private static func serve(_ connection: SocketConnection) {
        while true {
            let request: Request
            switch readRequest(connection) {
            case .none:
                return
            case .some(.failure(let refusal)):
                _ = send(refusal.response, to: connection, head: false, keepAlive: false)
                return
            case .some(.success(let parsed)):
                request = parsed
            }
            let keepAlive = request.keepsAlive
            let response = respond(to: request)
            guard send(response, to: connection, head: request.method == "HEAD", keepAlive: keepAlive), keepAlive else {
                return
            }
        }
    }

    /// The next request head, with any body read and dropped; nil when the connection ends first,
    /// a failure response for a request this server refuses.
    private static func readRequest(_ connection: SocketConnection) -> Result<Request, ResponseError>? {
        var line: String
        repeat {
            guard let next = connection.readLine() else { return nil }
            line = next
        } while line.isEmpty  // RFC 9112 §2.2: ignore empty lines before a request line
        let parts = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else {
            return .failure(ResponseError(.text(400, "Malformed request line.\n")))
        }
        var fields: [(name: String, value: String)] = []
        while true {
            guard let field = connection.readLine() else { return nil }
            if field.isEmpty { break }
            guard fields.count < 100, let colon = field.firstIndex(of: ":") else {
                return .failure(ResponseError(.text(400, "Malformed header field.\n")))
            }
            let name = field[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = field[field.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            fields.append((name, value))
        }
        let request = Request(method: parts[0], target: parts[1], version: parts[2], fields: fields)
        if request.value("transfer-encoding") != nil {
            return .failure(ResponseError(.text(501, "Chunked request bodies are not supported.\n")))
        }
        if let length = request.value("content-length") {
            guard let count = Int(length), count >= 0, count <= 1 << 20 else {
                return .failure(ResponseError(.text(413, "Request body too large.\n")))
            }
            guard connection.skip(count) else { return nil }
        }
        return .success(request)
    }

    private struct ResponseError: Error {
        let response: Response
        init(_ response: Response) { self.response = response }
    }

    /// Writes `response` (without its body for HEAD); false when the connection failed.
    private static func send(_ response: Response, to connection: SocketConnection, head: Bool, keepAlive: Bool) -> Bool {
        let reason = Self.reason(for: response.status)
        var text = "HTTP/1.1 \(response.status) \(reason)\r\n"
        for (name, value) in response.fields { text += "\(name): \(value)\r\n" }
        text += "Content-Length: \(response.body.count)\r\n"
        text += "Connection: \(keepAlive ? "keep-alive" : "close")\r\n\r\n"
        guard connection.write(text) else { return false }
        if head { return true }
        var offset = 0
        while offset < response.body.count {
            let end = min(offset + 65_536, response.body.count)
            guard connection.write(response.body.subdata(in: offset..<end)) else { return false }
            offset = end
        }
        return true
    }

    /// The reason phrase for the status codes this server sends.
    static func reason(for status: Int) -> String {
        switch status {
        case 200: "OK"
        case 302: "Found"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 413: "Content Too Large"
        case 501: "Not Implemented"
        default: "Status \(status)"
        }
    }
}
