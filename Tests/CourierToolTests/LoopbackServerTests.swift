import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

@testable import CourierTool
import ZIPFoundation

/// A plain TCP client for the loopback servers, on the tool's own ``SocketConnection`` (every read
/// and write times out after 10 seconds).
struct LoopbackClient {
    let connection: SocketConnection

    init(port: Int) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let code = POSIXErrorCode(rawValue: errno) ?? .EIO
            Glibc.close(fd)
            throw POSIXError(code)
        }
        connection = SocketConnection(fd: fd, timeout: 10)
    }

    func disconnect() { _ = Glibc.close(connection.fd) }

    /// One HTTP response as read from the wire.
    struct Response {
        var status: Int
        var fields: [String: String]
        var body: Data
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Sends a request (`headers` as extra lines) and reads the response; the body by its
    /// Content-Length, none for HEAD.
    func request(_ path: String, method: String = "GET", headers: [String] = []) throws -> Response {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for header in headers { text += header + "\r\n" }
        text += "\r\n"
        try #require(connection.write(text), "could not send the request")
        let statusLine = try #require(connection.readLine(), "no status line")
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        try #require(parts.count >= 2 && parts[0] == "HTTP/1.1", "bad status line \(statusLine)")
        var fields: [String: String] = [:]
        while let line = connection.readLine(), !line.isEmpty {
            let colon = try #require(line.firstIndex(of: ":"))
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = Int(fields["content-length"] ?? "0") ?? 0
        let body = method == "HEAD" ? Data() : try #require(connection.read(length), "body shorter than \(length)")
        return Response(status: Int(parts[1]) ?? 0, fields: fields, body: body)
    }

    /// Whether the server closed the connection (a read hits the end of the stream).
    func isClosedByServer() -> Bool { connection.readLine() == nil }
}

@Suite("loopback servers of the default run")
struct LoopbackServerTests {
    @Test func servesEveryPathOnOneKeptAliveConnection() throws {
        let server = try LoopbackServer()
        defer { #expect(server.stop(), "the server's threads did not end in time") }
        let client = try LoopbackClient(port: server.port)
        defer { client.disconnect() }

        let hello = try client.request("/hello.txt")
        #expect(hello.status == 200)
        #expect(hello.text == LoopbackServer.text)
        #expect(hello.fields["content-type"] == "text/plain; charset=utf-8")
        #expect(hello.fields["connection"] == "keep-alive")

        let json = try client.request("/data.json")
        #expect(json.status == 200)
        #expect(json.fields["content-type"] == "application/json")
        let object = try JSONSerialization.jsonObject(with: json.body) as? [String: Any]
        #expect(object?["ok"] as? Bool == true)

        let large = try client.request("/large.bin")
        #expect(large.status == 200)
        #expect(large.fields["content-length"] == String(4 << 20))
        #expect(large.body.count == LoopbackServer.largeSize)
        #expect(sameBytes(large.body, LoopbackServer.largeBody))

        let redirect = try client.request("/redirect")
        #expect(redirect.status == 302)
        #expect(redirect.fields["location"] == "/hello.txt")

        let missing = try client.request("/no/such/page?query=1")
        #expect(missing.status == 404)
        #expect(missing.text == "Not found: /no/such/page\n")

        let head = try client.request("/hello.txt", method: "HEAD")
        #expect(head.status == 200)
        #expect(head.fields["content-length"] == String(LoopbackServer.text.utf8.count))
        #expect(head.body.isEmpty)

        // All of it on one connection.
        #expect(server.openConnections == 1)
    }

    @Test func cookiesAreSetAndEchoed() throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let client = try LoopbackClient(port: server.port)
        defer { client.disconnect() }
        let set = try client.request("/cookies/set")
        #expect(set.status == 302)
        #expect(set.fields["location"] == "/cookies/echo")
        #expect(set.fields["set-cookie"]?.hasPrefix("\(LoopbackServer.cookieName)=\(LoopbackServer.cookieValue);") == true)
        let without = try client.request("/cookies/echo")
        #expect(without.text == "No Cookie header.\n")
        let with = try client.request("/cookies/echo", headers: ["Cookie: a=1; b=2"])
        #expect(with.text == "Cookie: a=1; b=2\n")
        #expect(with.fields["cache-control"] == "no-store")
    }

    @Test func authNeedsTheRightBasicCredentials() throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let client = try LoopbackClient(port: server.port)
        defer { client.disconnect() }
        let anonymous = try client.request("/auth")
        #expect(anonymous.status == 401)
        #expect(anonymous.fields["www-authenticate"] == "Basic realm=\"\(LoopbackServer.realm)\"")
        let wrong = try client.request("/auth", headers: ["Authorization: Basic " + Data("user:nope".utf8).base64EncodedString()])
        #expect(wrong.status == 401)
        let right = try client.request("/auth", headers: ["Authorization: Basic " + Data("user:secret".utf8).base64EncodedString()])
        #expect(right.status == 200)
        #expect(right.text == LoopbackServer.authorized)
    }

    @Test func requestBodiesAreReadAndClosingIsHonoured() throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let client = try LoopbackClient(port: server.port)
        defer { client.disconnect() }
        // A body is read and dropped, so the next request on the connection parses.
        try #require(client.connection.write("POST /hello.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"))
        let statusLine = try #require(client.connection.readLine())
        #expect(statusLine == "HTTP/1.1 405 Method Not Allowed")
        while let line = client.connection.readLine(), !line.isEmpty {}
        _ = client.connection.read("Only GET and HEAD.\n".utf8.count)
        let closing = try client.request("/hello.txt", headers: ["Connection: close"])
        #expect(closing.status == 200)
        #expect(closing.fields["connection"] == "close")
        #expect(client.isClosedByServer())
    }

    @Test func stopEndsOpenConnectionsAndRefusesNewOnes() throws {
        let server = try LoopbackServer()
        let port = server.port
        let idle = try LoopbackClient(port: port)
        defer { idle.disconnect() }
        #expect(try idle.request("/hello.txt").status == 200)
        let started = ContinuousClock.now
        #expect(server.stop())
        #expect(ContinuousClock.now - started < .seconds(2), "stop must not wait for the idle timeout")
        #expect(idle.isClosedByServer())
        #expect(throws: (any Error).self) { try LoopbackClient(port: port) }
    }

    @Test func theGopherServerAnswersMenusTextAndErrors() throws {
        let server = try LoopbackGopherServer()
        defer { #expect(server.stop()) }

        func ask(_ selector: String) throws -> String {
            let client = try LoopbackClient(port: server.port)
            defer { client.disconnect() }
            try #require(client.connection.write(selector + "\r\n"))
            var lines: [String] = []
            while let line = client.connection.readLine() { lines.append(line) }
            return lines.map { $0 + "\r\n" }.joined()
        }

        #expect(try ask("") == LoopbackGopherServer.menu(port: server.port))
        #expect(try ask("").hasPrefix("0Hello\t/hello.txt\t127.0.0.1\t\(server.port)\r\n"))
        #expect(try ask("/hello.txt")
            == "Hello from courier's loopback gopher server.\r\n..this line starts with a dot\r\n.\r\n")
        #expect(try ask("/nothing").hasPrefix("3'/nothing' does not exist\t"))
    }
}

@Suite("the self-check's zip archive")
struct SelfCheckArchiveTests {
    /// Writes the archive into a fresh directory and returns its bytes.
    private func writtenArchive() throws -> Data {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.file("archive.zip")
        try DefaultFixtures.writeArchive(to: file)
        return try Data(contentsOf: file)
    }

    @Test func theArchiveHasHeadersEntriesAndAnEndRecord() throws {
        let data = try writtenArchive()
        let bytes = [UInt8](data)
        #expect(Array(bytes.prefix(4)) == [0x50, 0x4B, 0x03, 0x04])
        let end = bytes.count - 22
        #expect(Array(bytes[end..<(end + 4)]) == [0x50, 0x4B, 0x05, 0x06])
        #expect(UInt16(bytes[end + 10]) | UInt16(bytes[end + 11]) << 8 == 4, "four entries")
        #expect(data.range(of: Data(DefaultFixtures.helloText.utf8)) != nil, "stored, so the text is there as is")
    }

    @Test func readingTheArchiveBackGivesEveryEntryStoredWithItsDateAndMode() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.file("archive.zip")
        try DefaultFixtures.writeArchive(to: file)
        let archive = try Archive(url: file, accessMode: .read)
        var read: [String] = []
        for entry in archive {
            var contents = Data()
            _ = try archive.extract(entry) { contents.append($0) }
            let expected = DefaultFixtures.archiveEntries.first { $0.path == entry.path }
            #expect(contents == expected?.contents, "\(entry.path)")
            #expect(entry.fileAttributes[.modificationDate] as? Date == DefaultFixtures.archiveDate, "\(entry.path)")
            let mode = (entry.fileAttributes[.posixPermissions] as? NSNumber)?.intValue
            #expect(mode == (entry.type == .directory ? 0o755 : 0o644), "\(entry.path)")
            #expect(entry.compressedSize == entry.uncompressedSize, "\(entry.path) is stored")
            read.append(entry.path)
        }
        #expect(read == DefaultFixtures.archiveEntries.map(\.path))
    }

    @Test func unzipAcceptsTheArchive() throws {
        let unzip = ["/usr/bin/unzip", "/bin/unzip"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let unzip else { return }  // the checks above cover the format without it
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.file("archive.zip")
        try DefaultFixtures.writeArchive(to: file)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: unzip)
        process.arguments = ["-tq", file.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = ContinuousClock.now + .seconds(20)
        while process.isRunning, ContinuousClock.now < deadline { usleep(10_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "unzip -t rejected the archive")
    }
}
