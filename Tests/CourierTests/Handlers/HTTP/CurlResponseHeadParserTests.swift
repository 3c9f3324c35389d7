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
}
