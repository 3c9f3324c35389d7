import Foundation
import Testing
@testable import Courier

/// The header-callback parser on the line sequences libcurl hands over, including trailer fields
/// after a chunked or HTTP/2 body. libcurl 7.88 passes trailer lines without the empty line that
/// ends them (`HTTPErrorTests.chunkedBodyWithTrailer` loads such a body from a server); other
/// libcurl versions pass that empty line too, which these sequences cover.
@Suite("libcurl response head parser")
struct CurlResponseHeadParserTests {
    /// What each line yields: "head <code>", "informational", "malformed" or "-" (needs more).
    private static func outcomes(_ lines: [String]) -> [String] {
        var parser = CurlResponseHeadParser()
        return lines.map { line in
            var bytes = Array((line + "\r\n").utf8)
            let outcome = bytes.withUnsafeMutableBytes { parser.consume(UnsafeRawBufferPointer($0)) }
            switch outcome {
            case .needMore: return "-"
            case .informational: return "informational"
            case .malformed: return "malformed"
            case .head(let head): return "head \(head.statusCode)"
            }
        }
    }

    @Test func trailersAfterAChunkedBodyAreSkipped() {
        let lines = ["HTTP/1.1 200 OK", "Transfer-Encoding: chunked", "", "X-Checksum: abc", "X-Other: def", ""]
        #expect(Self.outcomes(lines) == ["-", "-", "head 200", "-", "-", "-"])
    }

    @Test func trailersAfterAnHTTP2BodyAreSkipped() {
        #expect(Self.outcomes(["HTTP/2 200", "content-type: text/plain", "", "x-checksum: abc", ""])
                == ["-", "-", "head 200", "-", "-"])
    }

    @Test func aResponseAfterTrailersIsParsed() {
        // libcurl's own authentication round: a 401 with a chunked body and trailers, then the answer.
        let lines = ["HTTP/1.1 401 Unauthorized", "Transfer-Encoding: chunked", "", "X-Checksum: abc", "",
                     "HTTP/1.1 200 OK", "Content-Length: 2", ""]
        #expect(Self.outcomes(lines) == ["-", "-", "head 401", "-", "-", "-", "-", "head 200"])
    }

    @Test func aBadStatusLineIsStillMalformed() {
        // Without a chunked or HTTP/2 body before it, a block that does not start with a status line
        // is no trailer.
        #expect(Self.outcomes(["X-Checksum: abc", ""]) == ["-", "malformed"])
        #expect(Self.outcomes(["HTTP/1.1 200 OK", "Content-Length: 2", "", "garbage line", ""])
                == ["-", "-", "head 200", "-", "malformed"])
        #expect(Self.outcomes(["HTTP/1.1 100 Continue", "", "Bogus: status", ""]) == ["-", "informational", "-", "malformed"])
    }

    @Test func foldedLinesAreJoined() throws {
        var parser = CurlResponseHeadParser()
        var head: CurlResponseHead?
        for line in ["HTTP/1.1 200 OK", "X-Folded: one", " two", "\tthree  ", "X-Next: a", "X-Next: b", " c", ""] {
            var bytes = Array((line + "\r\n").utf8)
            if case .head(let complete) = bytes.withUnsafeMutableBytes({ parser.consume(UnsafeRawBufferPointer($0)) }) {
                head = complete
            }
        }
        let fields = try #require(head?.fields)
        #expect(fields.value(for: "X-Folded") == "one two three")
        #expect(fields.value(for: "x-next") == "a,b c")
    }

    /// A hostile head of 400,000 folded continuation lines is joined in linear time (a tenth of a
    /// second here): the parser runs on the session's loop thread, and joining each line to a copy of
    /// the value so far (quadratic: hundreds of gigabytes copied here, 40 s in a debug build) stalled every
    /// transfer of the session. libcurl passes at most 300 KiB of head, where the quadratic join
    /// cost about half a second per response (``HTTPHostileInputTests``).
    @Test func manyFoldedLinesAreJoinedInLinearTime() throws {
        var parser = CurlResponseHeadParser()
        let lineCount = 400_000
        var head: CurlResponseHead?
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            var status = Array("HTTP/1.1 200 OK\r\n".utf8)
            _ = status.withUnsafeMutableBytes { parser.consume(UnsafeRawBufferPointer($0)) }
            var first = Array("X-Folded: start\r\n".utf8)
            _ = first.withUnsafeMutableBytes { parser.consume(UnsafeRawBufferPointer($0)) }
            var continuation = Array(" abcd\r\n".utf8)
            for _ in 0..<lineCount {
                _ = continuation.withUnsafeMutableBytes { parser.consume(UnsafeRawBufferPointer($0)) }
            }
            var end = Array("\r\n".utf8)
            if case .head(let complete) = end.withUnsafeMutableBytes({ parser.consume(UnsafeRawBufferPointer($0)) }) {
                head = complete
            }
        }
        let value = try #require(head?.fields.value(for: "X-Folded"))
        #expect(value.utf8.count == "start".count + lineCount * " abcd".count)
        #expect(elapsed < .seconds(5), "took \(elapsed)")
    }
}
