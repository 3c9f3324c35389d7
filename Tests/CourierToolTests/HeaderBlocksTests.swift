import Courier
import Testing

@testable import CourierTool

/// ``HeaderBlocks``: where `-v` puts the blank line that ends an HTTP head, record by record.
@Suite("courier -v header blocks")
struct HeaderBlocksTests {
    /// Feeds `records` (transfer, kind, message) in order and returns every line printed.
    static func printed(_ records: [(String, WireTraceKind, String)]) -> [String] {
        var blocks = HeaderBlocks()
        return records.flatMap { blocks.lines(transfer: $0.0, kind: $0.1, message: $0.2) }
    }

    @Test func aRequestAndItsResponseWithABodyEachEndWithABlankLine() {
        let lines = Self.printed([
            ("1", .headerOut, "GET / HTTP/1.1"), ("1", .headerOut, "Host: a"),
            ("1", .headerIn, "HTTP/1.1 200 OK"), ("1", .headerIn, "Content-Length: 3"),
            ("1", .dataIn, "[3 bytes data]"), ("1", .info, "Connection #0 to host a left intact"),
        ])
        #expect(lines == ["> GET / HTTP/1.1", "> Host: a", "> ", "< HTTP/1.1 200 OK", "< Content-Length: 3", "< ",
                          "* Connection #0 to host a left intact"])
    }

    @Test func aContinueResponseIsABlockOfItsOwn() {
        let lines = Self.printed([
            ("1", .headerIn, "HTTP/1.1 100 Continue"), ("1", .headerIn, "HTTP/1.1 201 Created"),
            ("1", .headerIn, "Content-Length: 0"), ("1", .info, "done"),
        ])
        #expect(lines == ["< HTTP/1.1 100 Continue", "< ", "< HTTP/1.1 201 Created", "< Content-Length: 0", "< ", "* done"])
    }

    @Test func interleavedTransfersKeepTheirOwnBlocks() {
        let lines = Self.printed([
            ("1", .headerOut, "GET /a HTTP/1.1"), ("2", .headerOut, "GET /b HTTP/1.1"),
            ("1", .headerIn, "HTTP/1.1 200 OK"), ("2", .headerIn, "HTTP/1.1 404 Not Found"),
            ("1", .dataIn, "[1 bytes data]"), ("2", .dataIn, "[1 bytes data]"),
        ])
        #expect(lines == ["> GET /a HTTP/1.1", "> GET /b HTTP/1.1", "> ", "< HTTP/1.1 200 OK", "> ",
                          "< HTTP/1.1 404 Not Found", "< ", "< "])
    }

    @Test func ftpCommandsAndRepliesOpenNoBlock() {
        let lines = Self.printed([
            ("1", .headerIn, "220 ready"), ("1", .headerOut, "USER anonymous"), ("1", .headerIn, "331 password"),
            ("1", .headerOut, "PASS [redacted]"), ("1", .headerIn, "230 in"), ("1", .dataIn, "[5 bytes data]"),
        ])
        #expect(lines == ["< 220 ready", "> USER anonymous", "< 331 password", "> PASS [redacted]", "< 230 in"])
    }
}
