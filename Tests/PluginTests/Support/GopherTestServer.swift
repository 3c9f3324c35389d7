import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A small gopher server (RFC 1436) on 127.0.0.1 and an ephemeral port, in this test process: one
/// thread accepts, one thread per connection answers. It lives as long as the process; every
/// connection is closed after at most ``connectionLimit`` seconds, so nothing waits forever.
///
/// Selectors:
/// - `""`: the root menu (``rootMenu``)
/// - `/hello.txt`: text with a dot-stuffed line and the "." terminator (``helloWire`` → ``helloText``)
/// - `/docs`: a submenu
/// - `/blob.bin`: ``blob`` (binary, 300 KB), then the connection closes
/// - `/big.bin`: ``big`` (4 MiB) in 64 KiB writes
/// - `/slow.bin`: ``slowChunks`` chunks of ``slowChunk`` bytes, 50 ms apart
/// - `/hang`: nothing, until the client goes away
/// - `/search` with a TAB and terms: a menu naming the terms
/// - anything else: an error item ("3…"), as gopher servers answer a missing selector
final class GopherTestServer: @unchecked Sendable {
    /// The process's server, started on first use; nil when it could not start.
    static let shared: GopherTestServer? = try? GopherTestServer()

    /// The server's port on 127.0.0.1.
    let port: Int
    private let listener: Int32
    /// How long one connection may stay open.
    static let connectionLimit: TimeInterval = 20

    /// Selectors received, in order (for tests that check what was asked).
    private let lock = NSLock()
    private var received: [String] = []
    /// Connections currently open.
    private var open = 0

    static let rootMenu = "0Hello\t/hello.txt\t127.0.0.1\t70\r\n1Docs\t/docs\t127.0.0.1\t70\r\niJust information\t\terror.host\t1\r\n.\r\n"
    static let helloWire = "Hello, gopher.\r\n..a line that starts with a dot\r\nlast line\r\n.\r\nnot part of the text\r\n"
    static let helloText = "Hello, gopher.\r\n.a line that starts with a dot\r\nlast line\r\n"
    static let docsMenu = "0Readme\t/docs/readme.txt\t127.0.0.1\t70\r\n.\r\n"
    static let blob = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) })
    static let big = Data((0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 11) })
    static let slowChunk = 1000
    static let slowChunks = 10

    private init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else { close(fd); throw POSIXError(.EADDRINUSE) }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: actual.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "gopher test server"
        thread.start()
    }

    /// `gopher://127.0.0.1:<port>/<path>`.
    func url(_ path: String = "") -> URL {
        URL(string: "gopher://127.0.0.1:\(port)\(path)")!
    }

    /// Every selector received so far.
    var selectors: [String] { lock.withLock { received } }

    /// Connections open right now.
    var openConnections: Int { lock.withLock { open } }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            lock.withLock { open += 1 }
            let thread = Thread { [self] in
                serve(client)
                close(client)
                lock.withLock { open -= 1 }
            }
            thread.start()
        }
    }

    private func serve(_ fd: Int32) {
        var timeout = timeval(tv_sec: Int(Self.connectionLimit), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard let selector = readLine(fd) else { return }
        lock.withLock { received.append(selector) }
        let parts = selector.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        switch parts[0] {
        case "":
            send(fd, Data(Self.rootMenu.utf8))
        case "/hello.txt":
            send(fd, Data(Self.helloWire.utf8))
        case "/docs":
            send(fd, Data(Self.docsMenu.utf8))
        case "/blob.bin":
            send(fd, Self.blob)
        case "/big.bin":
            var offset = 0
            while offset < Self.big.count {
                let end = min(offset + 65_536, Self.big.count)
                guard send(fd, Self.big.subdata(in: offset..<end)) else { return }
                offset = end
            }
        case "/slow.bin":
            for index in 0..<Self.slowChunks {
                if index > 0 { usleep(50_000) }
                guard send(fd, Data(repeating: UInt8(index), count: Self.slowChunk)) else { return }
            }
        case "/hang":
            // Wait for the client to close (recv returns 0) or the limit to pass.
            var byte: UInt8 = 0
            _ = recv(fd, &byte, 1, 0)
        case "/search":
            let terms = parts.count > 1 ? parts[1] : ""
            send(fd, Data("iYou searched for \(terms)\t\terror.host\t1\r\n.\r\n".utf8))
        default:
            send(fd, Data("3'\(parts[0])' does not exist\t\terror.host\t1\r\n.\r\n".utf8))
        }
    }

    /// Reads one CRLF- or LF-terminated line, at most 4 KiB.
    private func readLine(_ fd: Int32) -> String? {
        var line = [UInt8]()
        var byte: UInt8 = 0
        while line.count < 4096 {
            let count = recv(fd, &byte, 1, 0)
            guard count == 1 else { return nil }
            if byte == UInt8(ascii: "\n") {
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                return String(decoding: line, as: UTF8.self)
            }
            line.append(byte)
        }
        return nil
    }

    @discardableResult
    private func send(_ fd: Int32, _ data: Data) -> Bool {
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                guard let base = buffer.baseAddress else { return false }
                let sent = Glibc.send(fd, base + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                if sent <= 0 {
                    if sent < 0 && errno == EINTR { continue }
                    return false
                }
                offset += sent
            }
            return true
        }
    }
}
