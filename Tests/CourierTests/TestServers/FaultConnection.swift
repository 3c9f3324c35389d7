import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One accepted socket and what was read from it but not yet used.
final class FaultConnection {
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
func socketSend(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    send(fd, bytes, count, Int32(MSG_NOSIGNAL))
}
