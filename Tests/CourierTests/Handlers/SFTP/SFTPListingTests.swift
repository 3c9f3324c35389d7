import Foundation
import Testing
@testable import Courier

/// Directory listings over sftp: a URL ending in `/` returns the shared listing format.
extension SFTPTests {
    @Suite("SFTP listings")
    struct ListingTests {
        @Test func dataTaskListsTheDirectory() async throws {
            let server = try await SFTPTest.server()
            let session = SFTPTest.session(server)
            defer { session.finishTasksAndInvalidate() }
            let url = server.url("\(SSHServer.Files.directory)/", password: true)
            let result = try await session.loadData(url)
            #expect(result.error == nil)
            #expect(result.response?.mimeType == URLDirectoryListing.mimeType)
            let entries = try URLDirectoryListing.decode(try #require(result.data), url: url)
            let byName = Dictionary(uniqueKeysWithValues: entries.map { ($0.name, $0) })
            #expect(Set(byName.keys) == ["a.txt", "b.bin", "sub", "link"])
            #expect(byName["a.txt"]?.type == .file)
            #expect(byName["a.txt"]?.size == Int64(SSHServer.Files.aContents.count))
            #expect(byName["a.txt"]?.permissions == 0o644)
            #expect(byName["a.txt"]?.modificationDate != nil)
            #expect(byName["b.bin"]?.size == 1000)
            #expect(byName["sub"]?.type == .directory)
            #expect(byName["link"]?.type == .symbolicLink)
            #expect(byName["link"]?.symbolicLinkDestination == "a.txt")
        }

        @Test func directoryListingAPI() async throws {
            let server = try await SFTPTest.server()
            let session = SFTPTest.session(server)
            defer { session.finishTasksAndInvalidate() }
            let url = server.url("\(SSHServer.Files.directory)/", password: true)
            let (entries, response) = try await withTimeout(20, "directoryListing") { try await session.directoryListing(from: url) }
            #expect(response.mimeType == URLDirectoryListing.mimeType)
            #expect(entries.count == 4)
            let sub = try #require(entries.first { $0.name == "sub" })
            #expect(sub.url(relativeTo: url).hasDirectoryPath)
        }

        @Test func listingAMissingDirectoryFails() async throws {
            let server = try await SFTPTest.server()
            let session = SFTPTest.session(server)
            defer { session.finishTasksAndInvalidate() }
            let result = try await session.loadData(server.url("no-such-directory/", password: true))
            #expect(try SFTPTest.urlError(result.error).code == .fileDoesNotExist)
        }

        /// A listing past its caps (``DirectoryListingLimits``, lowered here: the real ones are a
        /// million entries and 128 MiB) fails with `dataLengthExceedsMaximum`, naming the cap.
        @Test(arguments: [(DirectoryListingCaps(maximumEntries: 3, maximumBytes: 1 << 20), "3 entries"),
                          (DirectoryListingCaps(maximumEntries: 100, maximumBytes: 64), "64 bytes")])
        func listingPastItsCapsFails(caps: DirectoryListingCaps, named: String) async throws {
            let server = try await SFTPTest.server()
            let session = SFTPTest.session(server) { $0.directoryListingCaps = caps }
            defer { session.finishTasksAndInvalidate() }
            let url = server.url("\(SSHServer.Files.directory)/", password: true)
            let result = try await session.loadData(url)
            let error = try SFTPTest.urlError(result.error)
            #expect(error.code == .dataLengthExceedsMaximum)
            #expect(error.localizedDescription.contains("more than \(named)"), "\(error.localizedDescription)")
            #expect(result.data == nil)
        }

        @Test func aListingWithinItsCapsSucceeds() async throws {
            let server = try await SFTPTest.server()
            let session = SFTPTest.session(server) { $0.directoryListingCaps = DirectoryListingCaps(maximumEntries: 4, maximumBytes: 1 << 20) }
            defer { session.finishTasksAndInvalidate() }
            let result = try await session.loadData(server.url("\(SSHServer.Files.directory)/", password: true))
            #expect(result.error == nil)
            #expect(try URLDirectoryListing.decode(try #require(result.data), url: nil).count == 4)
        }
    }
}
