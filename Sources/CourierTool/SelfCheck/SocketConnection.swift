import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One accepted connection, used by one thread: buffered reads of lines and byte counts, and writes
/// that send everything or report failure. A read or write that blocks longer than the listener's
/// timeout fails.
final class SocketConnection: @unchecked Sendable {
    let fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0

    init(fd: Int32, timeout: TimeInterval) {
        self.fd = fd
        var value = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// The next line without its LF or CRLF; nil at the end of the stream, on a timeout or error, or
    /// when the line is longer than `limit` bytes.
    func readLine(limit: Int = 8192) -> String? {
        var scanned = start
        while true {
            if let newline = buffer[scanned...].firstIndex(of: UInt8(ascii: "\n")) {
                var end = newline
                if end > start, buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                let line = String(decoding: buffer[start..<end], as: UTF8.self)
                start = newline + 1
                compact()
                return line
            }
            scanned = buffer.count
            guard buffer.count - start <= limit, fill() else { return nil }
        }
    }

    /// Reads exactly `count` bytes; nil when the stream ends first.
    func read(_ count: Int) -> Data? {
        var data = Data()
        guard consume(count, { data.append(contentsOf: $0) }) else { return nil }
        return data
    }

    /// Reads and drops `count` bytes; false when the stream ends first.
    func skip(_ count: Int) -> Bool {
        consume(count) { _ in }
    }

    /// Passes the next `count` bytes to `body` as they become available; false when the stream ends
    /// first.
    private func consume(_ count: Int, _ body: (ArraySlice<UInt8>) -> Void) -> Bool {
        var remaining = count
        while remaining > 0 {
            if start == buffer.count {
                guard fill() else { return false }
            }
            let take = min(remaining, buffer.count - start)
            body(buffer[start..<(start + take)])
            start += take
            remaining -= take
            compact()
        }
        return true
    }

    /// Sends all of `data`; false when the peer went away or a send timed out.
    @discardableResult
    func write(_ data: Data) -> Bool {
        data.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress else { return true }
            var offset = 0
            while offset < bytes.count {
                let sent = send(fd, base + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                if sent < 0 && errno == EINTR { continue }
                guard sent > 0 else { return false }
                offset += sent
            }
            return true
        }
    }

    @discardableResult
    func write(_ text: String) -> Bool { write(Data(text.utf8)) }

    /// Reads more bytes into the buffer; false at the end of the stream, on a timeout or an error.
    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            buffer.append(contentsOf: chunk[0..<count])
            return true
        }
    }

    private func compact() {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 65_536 {
            buffer.removeFirst(start)
            start = 0
        }
    }
}
