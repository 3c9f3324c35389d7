import Foundation
import Testing
@testable import Courier

/// Directory listings over FTP: MLSD on the standard server, LIST on the server without MLSD, both
/// through `directoryListing(from:)` and as the body of a data task.
@Suite("FTP listings", .serialized)
struct FTPListingTests {
    private func check(_ entries: [URLDirectoryEntry], sourceLocation: SourceLocation = #_sourceLocation) {
        let byName = Dictionary(entries.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        #expect(byName["a.txt"]?.type == .file, sourceLocation: sourceLocation)
        #expect(byName["a.txt"]?.size == Int64(FTPTestServer.Files.aContents.count), sourceLocation: sourceLocation)
        #expect(byName["sub"]?.type == .directory, sourceLocation: sourceLocation)
        #expect(byName["name with spaces.txt"]?.type == .file, sourceLocation: sourceLocation)
        #expect(byName["link"] != nil, sourceLocation: sourceLocation)
        #expect(byName["."] == nil && byName[".."] == nil, sourceLocation: sourceLocation)
        if let date = byName["a.txt"]?.modificationDate {
            #expect(abs(date.timeIntervalSinceNow) < 24 * 3600, sourceLocation: sourceLocation)
        } else {
            Issue.record("a.txt has no modification date", sourceLocation: sourceLocation)
        }
    }

    @Test func machineReadableListing() async throws {
        let server = try await FTPTest.servers()
        let session = FTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let (entries, response) = try await withTimeout(20) { try await session.directoryListing(from: server.url("/dir/")) }
        #expect(response.mimeType == URLDirectoryListing.mimeType)
        check(entries)
    }

    @Test func listFallbackOnAServerWithoutMLSD() async throws {
        let server = try await FTPTest.servers()
        let session = FTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        for _ in 0..<2 { // the second listing goes straight to LIST
            let (entries, _) = try await withTimeout(20) {
                try await session.directoryListing(from: server.url("/dir/", server: .quirks))
            }
            check(entries)
            #expect(entries.first { $0.name == "link" }?.type == .symbolicLink)
            #expect(entries.first { $0.name == "a.txt" }?.permissions != nil, "LIST gives permissions")
        }
    }

    /// libcurl 7.88 leaves a transfer on a reused connection waiting for nothing when the reply to
    /// its first command, PASV, is there the moment it was sent (``CurlFTPDoPhaseNudge``); the listing
    /// then hung until its timeout, about one run in three on the quirks server. The eager server
    /// has that reply waiting every time.
    @Test func listingsOnAReusedConnectionWhosePASVReplyIsThereAtOnce() async throws {
        let server = try await FTPTest.servers()
        let session = FTPTest.session { $0.timeoutIntervalForRequest = 5 }
        defer { session.finishTasksAndInvalidate() }
        for _ in 0..<3 { // the second and third reuse the control connection, in the same directory
            let (entries, _) = try await withTimeout(10) {
                try await session.directoryListing(from: server.url(FTPTestServer.Files.dir, server: .eager))
            }
            #expect(entries.map(\.name).sorted() == FTPTestServer.Files.dirEntries)
        }
    }

    @Test func dataTaskBodyIsTheListingFormat() async throws {
        let server = try await FTPTest.servers()
        let session = FTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let result = try await session.loadData(server.url("/dir/", user: FTPTestServer.user, password: FTPTestServer.password))
        #expect(result.error == nil)
        #expect(result.response?.mimeType == URLDirectoryListing.mimeType)
        let body = try #require(result.data)
        check(try URLDirectoryListing.decode(body))
        #expect(body.last == 0x0A)
    }

    @Test func aFileIsNotAListing() async throws {
        let server = try await FTPTest.servers()
        let session = FTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        await #expect(throws: URLError.self) {
            _ = try await withTimeout(20) { try await session.directoryListing(from: server.url("/hello.txt")) }
        }
    }
}
