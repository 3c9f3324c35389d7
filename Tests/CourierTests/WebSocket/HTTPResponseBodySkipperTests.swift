import Foundation
import Testing
@testable import Courier

/// Reading past a 401's body on a connection that goes on (NTLM's CHALLENGE in the handshake).
@Suite("HTTP response body skipper")
struct HTTPResponseBodySkipperTests {
    private static func response(_ fields: [String: String], version: String = "HTTP/1.1") -> HTTPURLResponse {
        HTTPURLResponse(url: URL(string: "http://127.0.0.1/")!, statusCode: 401, httpVersion: version, headerFields: fields)!
    }

    /// Feeds `bytes` in pieces of `piece` bytes; the outcome of the last piece (or the first that is not `needMore`).
    private static func feed(_ skipper: inout HTTPResponseBodySkipper, _ bytes: [UInt8], piece: Int) -> HTTPResponseBodySkipper.Outcome {
        var outcome = HTTPResponseBodySkipper.Outcome.needMore
        var start = 0
        repeat {
            let end = min(start + piece, bytes.count)
            outcome = Array(bytes[start..<end]).withUnsafeBytes { skipper.append($0) }
            start = end
        } while start < bytes.count && outcome == .needMore
        return outcome
    }

    @Test(arguments: [1, 3, 1000])
    func aContentLengthBodyEndsAndTheRestIsKept(piece: Int) {
        var skipper = HTTPResponseBodySkipper(.length(5), limit: 100)
        let outcome = Self.feed(&skipper, Array("hello".utf8), piece: piece)
        var after = HTTPResponseBodySkipper(.length(2), limit: 100)
        let withRest = Array("okHTTP".utf8).withUnsafeBytes { after.append($0) }
        #expect(outcome == .done(rest: Data()) && withRest == .done(rest: Data("HTTP".utf8)))
    }

    @Test func anEmptyBodyIsDoneAtOnce() {
        var skipper = HTTPResponseBodySkipper(.length(0), limit: 100)
        #expect(skipper.isComplete && [UInt8]().withUnsafeBytes { skipper.append($0) } == .done(rest: Data()))
    }

    @Test(arguments: [1, 2, 7, 1000])
    func aChunkedBodyWithExtensionsAndTrailersEnds(piece: Int) {
        var skipper = HTTPResponseBodySkipper(.chunked, limit: 1000)
        let body = Array("5;ext=1\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-Trailer: yes\r\n\r\n".utf8)
        #expect(Self.feed(&skipper, body, piece: piece) == .done(rest: Data()))
    }

    @Test func theBytesAfterAChunkedBodyAreTheRest() {
        var skipper = HTTPResponseBodySkipper(.chunked, limit: 1000)
        let outcome = Array("3\r\nabc\r\n0\r\n\r\nnext".utf8).withUnsafeBytes { skipper.append($0) }
        #expect(outcome == .done(rest: Data("next".utf8)))
    }

    @Test(arguments: ["zz\r\n", "5\r\nhelloXY\r\n", "-5\r\n"])
    func aMalformedChunkedBodyIsReported(body: String) {
        var skipper = HTTPResponseBodySkipper(.chunked, limit: 1000)
        let outcome = Self.feed(&skipper, Array(body.utf8), piece: 1000)
        guard case .malformed = outcome else {
            Issue.record("\(body.debugDescription) gave \(outcome)")
            return
        }
    }

    @Test func aBodyOverTheLimitIsReported() {
        var skipper = HTTPResponseBodySkipper(.length(10), limit: 4)
        #expect(Self.feed(&skipper, Array("0123456789".utf8), piece: 1000) == .malformed("the body is longer than 4 bytes"))
    }

    @Test func framingFollowsTheResponsesFields() {
        let framings = [
            HTTPResponseBodySkipper.framing(of: Self.response(["Content-Length": "12"])),
            HTTPResponseBodySkipper.framing(of: Self.response(["Transfer-Encoding": "gzip, chunked"])),
            HTTPResponseBodySkipper.framing(of: Self.response(["Content-Length": "12", "Connection": "close"])),
            HTTPResponseBodySkipper.framing(of: Self.response([:])),
            HTTPResponseBodySkipper.framing(of: Self.response(["Content-Length": "12"], version: "HTTP/1.0")),
            HTTPResponseBodySkipper.framing(of: Self.response(["Content-Length": "12", "Connection": "Keep-Alive"], version: "HTTP/1.0")),
        ]
        #expect(framings == [.length(12), .chunked, nil, nil, nil, .length(12)])
    }
}
