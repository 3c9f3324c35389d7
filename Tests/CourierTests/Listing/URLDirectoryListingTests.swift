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
