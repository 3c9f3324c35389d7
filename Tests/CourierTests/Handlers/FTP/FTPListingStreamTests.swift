import Foundation
import Testing
@testable import Courier

/// ``FTPListingStream``: the same entries however the reply is cut into pieces, and its caps.
@Suite("FTP listing stream")
struct FTPListingStreamTests {
    private static let reply = Data("""
        type=dir;modify=20261120091403;UNIX.mode=0755; docs\r
        type=file;size=1204;modify=20261120091403; notes.txt\r
        type=cdir; .\r
        type=file;size=7; name with spaces.txt\r
        type=file;size=1; last line without a break
        """.utf8)
    private static let url = URL(string: "ftp://127.0.0.1/dir/")

    private func consume(_ data: Data, into stream: inout FTPListingStream) throws(URLError) -> Data {
        var stream2 = stream
        let body = try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Result<Data, URLError> in
            do throws(URLError) { return .success(try stream2.consume(raw, url: Self.url)) } catch { return .failure(error) }
        }.get()
        stream = stream2
        return body
    }

    /// The code of the error `body` throws, or `nil`.
    private func errorCode(_ body: () throws -> Void) -> URLError.Code? {
        do {
            try body()
            return nil
        } catch {
            return (error as? URLError)?.code
        }
    }

    @Test func piecesGiveTheSameEntriesAsTheWholeReply() throws {
        let now = Date()
        let whole = URLDirectoryListing.encode(FTPListingParser.parse(Self.reply, mlsd: true, now: now))
        for pieceSize in [1, 2, 3, 7, 64, Self.reply.count] {
            var stream = FTPListingStream(machineReadable: true, now: now)
            var body = Data()
            var offset = 0
            while offset < Self.reply.count {
                let end = min(offset + pieceSize, Self.reply.count)
                body.append(try consume(Self.reply.subdata(in: offset..<end), into: &stream))
                offset = end
            }
            body.append(try stream.finish(url: Self.url))
            #expect(body == whole, "pieces of \(pieceSize) bytes")
        }
    }

    @Test func moreEntriesThanTheCapFail() {
        var stream = FTPListingStream(machineReadable: true, maximumEntries: 2)
        #expect(errorCode { _ = try consume(Self.reply, into: &stream) } == .dataLengthExceedsMaximum)
    }

    @Test func moreBytesThanTheCapFail() {
        var stream = FTPListingStream(machineReadable: true, maximumBytes: Self.reply.count - 1)
        #expect(errorCode { _ = try consume(Self.reply, into: &stream) } == .dataLengthExceedsMaximum)
    }

    @Test func aLineLongerThanTheCapFails() {
        var stream = FTPListingStream(machineReadable: true, maximumLineLength: 16)
        #expect(errorCode { _ = try consume(Data(repeating: 0x41, count: 17), into: &stream) } == .cannotParseResponse)
    }
}
