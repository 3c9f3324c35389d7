import Foundation
import Testing
@testable import Courier

@Suite("URLDirectoryListing")
struct URLDirectoryListingTests {
    @Test func entriesRoundTripThroughTheBody() throws {
        let entries = [
            URLDirectoryEntry(name: "notes.txt", type: .file, size: 1204,
                              modificationDate: Date(timeIntervalSince1970: 1_763_800_000), permissions: 0o644),
            URLDirectoryEntry(name: "docs", type: .directory, modificationDate: Date(timeIntervalSince1970: 1_763_800_000.25)),
            URLDirectoryEntry(name: "latest", type: .symbolicLink, symbolicLinkDestination: "docs/v2"),
            URLDirectoryEntry(name: "name with spaces & \"quotes\"\n", type: .other),
        ]
        let body = URLDirectoryListing.encode(entries)
        let lines = body.split(separator: 0x0A)
        #expect(lines.count == 4, "one line per entry, newlines in names escaped")
        #expect(String(decoding: lines[0], as: UTF8.self)
            == #"{"modificationDate":"2025-11-22T08:26:40Z","name":"notes.txt","permissions":420,"size":1204,"type":"file"}"#)
        #expect(String(decoding: lines[1], as: UTF8.self).contains(#""modificationDate":"2025-11-22T08:26:40.250Z""#))
        #expect(try URLDirectoryListing.decode(body) == entries)
    }

    /// Dates are written to the nearest millisecond: one that sits just below a millisecond as a
    /// double (an MLSD `modify=…635`) is written as .635, not truncated to .634 (found by the
    /// ftp-mlsd fuzz harness); dates before 1970 count their milliseconds forwards.
    @Test(arguments: [(1_732_093_800.635, "2024-11-20T09:10:00.635Z"), (1_732_093_800.0004, "2024-11-20T09:10:00Z"),
                      (1_732_093_800.9996, "2024-11-20T09:10:01Z"), (-1.5, "1969-12-31T23:59:58.500Z"),
                      (1_732_093_800.007, "2024-11-20T09:10:00.007Z")])
    func datesAreWrittenToTheNearestMillisecond(seconds: Double, expected: String) throws {
        let date = Date(timeIntervalSince1970: seconds)
        let text = URLDirectoryListing.formatDate(date)
        let back = try #require(URLDirectoryListing.parseDate(text))
        #expect(text == expected && abs(back.timeIntervalSince(date)) <= 0.0005 + 1e-6)
    }

    @Test func absentFieldsStayAbsent() throws {
        let line = URLDirectoryListing.encodeLine(URLDirectoryEntry(name: "x", type: .file))
        #expect(String(decoding: line, as: UTF8.self) == "{\"name\":\"x\",\"type\":\"file\"}\n")
    }

    @Test func blankLinesAreSkippedAndGarbageIsAnError() throws {
        let body = Data("\n{\"name\":\"a\",\"type\":\"file\"}\r\n\n".utf8)
        #expect(try URLDirectoryListing.decode(body).map(\.name) == ["a"])
        let url = URL(string: "ftp://127.0.0.1/dir/")
        #expect {
            try URLDirectoryListing.decode(Data("{\"name\":\"a\",\"type\":\"file\"}\nnot json\n".utf8), url: url)
        } throws: { error in
            let urlError = error as? URLError
            return urlError?.code == .cannotParseResponse && urlError?.failingURL == url
        }
        #expect(URLDirectoryListing.decodeEntry(fromLine: Data(#"{"name":"","type":"file"}"#.utf8)) == nil)
        #expect(URLDirectoryListing.decodeEntry(fromLine: Data(#"{"name":"a","type":"fifo"}"#.utf8)) == nil)
    }

    @Test func entryURLsMarkDirectories() throws {
        let base = try #require(URL(string: "ftp://127.0.0.1/pub/"))
        #expect(URLDirectoryEntry(name: "sub", type: .directory).url(relativeTo: base).absoluteString == "ftp://127.0.0.1/pub/sub/")
        #expect(URLDirectoryEntry(name: "a b.txt", type: .file).url(relativeTo: base).absoluteString == "ftp://127.0.0.1/pub/a%20b.txt")
    }
}
