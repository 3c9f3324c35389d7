import Foundation
import Testing
@testable import Courier

/// The zip plugin (`Plugins/Zip`, Swift with the plugin kit and ZIPFoundation), loaded from a
/// directory and fetched through URLSession's data, download and async APIs.
@Suite("Zip plugin")
struct ZipPluginTests {
    /// A directory holding `archive.zip` with a few stored entries; removed by the caller.
    private struct Archive {
        let directory: URL
        let file: URL
        static let readme = Data("Read me, from inside a zip archive.\n".utf8)
        static let page = Data("<h1>zip</h1>\n".utf8)
        static let large = Data((0..<(6 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 17 &+ $0 >> 13) })

        init(large: Bool = false) throws {
            try InstalledPlugins.install()
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-zip-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            var writer = ZipArchiveWriter()
            writer.add("readme.txt", Self.readme)
            writer.add("docs/")
            writer.add("docs/index.html", Self.page)
            writer.add("docs/deep/note.json", Data("{}".utf8))
            writer.add("name with spaces.txt", Data("spaces".utf8))
            if large { writer.add("large.bin", Self.large) }
            file = directory.appendingPathComponent("archive.zip")
            try writer.data.write(to: file)
        }

        /// `zip://<archive path>!/<entry>`.
        func url(_ entry: String) -> URL {
            var components = URLComponents()
            components.scheme = "zip"
            components.host = ""
            components.path = file.path + "!/" + entry
            return components.url!
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    @Test func anEntryArrivesWithItsTypeAndLength() async throws {
        let archive = try Archive()
        defer { archive.remove() }
        let result = await fetch(archive.url("readme.txt"))
        #expect(result.error == nil, "\(String(describing: result.error))")
        #expect(result.data == Archive.readme)
        #expect(result.response?.mimeType == "text/plain")
        #expect(result.response?.expectedContentLength == Int64(Archive.readme.count))
        let nested = await fetch(archive.url("docs/index.html"))
        #expect(nested.data == Archive.page)
        #expect(nested.response?.mimeType == "text/html")
        let spaced = await fetch(archive.url("name with spaces.txt"))
        #expect(spaced.text == "spaces")
    }

    @Test func theJarFormOfTheURLWorks() async throws {
        let archive = try Archive()
        defer { archive.remove() }
        let url = try #require(URL(string: "zip://\(archive.file.path)!/readme.txt"))
        let result = await fetch(url)
        #expect(result.data == Archive.readme)
    }

    /// 1980-01-01T00:00:00Z, the DOS date and time `ZipArchiveWriter` writes by default.
    private static let dosEpoch = Date(timeIntervalSince1970: 315_532_800)

    @Test func directoriesAreListedInCouriersListingFormat() async throws {
        let archive = try Archive()
        defer { archive.remove() }
        let root = await fetch(archive.url(""))
        #expect(root.error == nil, "\(String(describing: root.error))")
        #expect(root.response?.mimeType == URLDirectoryListing.mimeType)
        #expect(root.response?.textEncodingName == "utf-8")
        #expect(root.response?.expectedContentLength == Int64(root.data?.count ?? -1))
        let rootEntries = try URLDirectoryListing.decode(try #require(root.data))
        #expect(rootEntries == [
            URLDirectoryEntry(name: "docs", type: .directory, modificationDate: Self.dosEpoch, permissions: 0o755),
            URLDirectoryEntry(name: "name with spaces.txt", type: .file, size: 6, modificationDate: Self.dosEpoch,
                              permissions: 0o644),
            URLDirectoryEntry(name: "readme.txt", type: .file, size: Int64(Archive.readme.count),
                              modificationDate: Self.dosEpoch, permissions: 0o644),
        ])
        // The plugin's bytes are Courier's encoding of the same entries.
        #expect(root.data == URLDirectoryListing.encode(rootEntries))

        // `deep/` exists only as a prefix of `docs/deep/note.json`: a name and a type, nothing more.
        let docs = await fetch(archive.url("docs/"))
        #expect(docs.text.hasPrefix(#"{"name":"deep","type":"directory"}"# + "\n"))
        #expect(try URLDirectoryListing.decode(try #require(docs.data)) == [
            URLDirectoryEntry(name: "deep", type: .directory),
            URLDirectoryEntry(name: "index.html", type: .file, size: Int64(Archive.page.count),
                              modificationDate: Self.dosEpoch, permissions: 0o644),
        ])
        // A directory that exists only as a prefix of its entries, named without a trailing slash.
        let deep = await fetch(archive.url("docs/deep"))
        #expect(deep.response?.mimeType == URLDirectoryListing.mimeType)
        #expect(try URLDirectoryListing.decode(try #require(deep.data)).map(\.name) == ["note.json"])

        // HEAD: the listing's type and length, no body.
        var head = URLRequest(url: archive.url("docs/"))
        head.httpMethod = "HEAD"
        let headResult = await fetch(head)
        #expect(headResult.error == nil)
        #expect(headResult.response?.mimeType == URLDirectoryListing.mimeType)
        #expect(headResult.data?.isEmpty != false)
    }

    @Test func theSessionDecodesTheListing() async throws {
        let archive = try Archive()
        defer { archive.remove() }
        let session = makeSession()
        let (entries, response) = try await session.directoryListing(from: archive.url("docs/"))
        #expect(response.mimeType == URLDirectoryListing.mimeType)
        #expect(entries.map(\.name) == ["deep", "index.html"])
        #expect(entries.map(\.type) == [.directory, .file])
        let (root, _) = try await session.directoryListing(from: archive.url(""))
        #expect(root.map(\.name) == ["docs", "name with spaces.txt", "readme.txt"])
        // A file entry is not a listing.
        await #expect {
            _ = try await session.directoryListing(from: archive.url("readme.txt"))
        } throws: { error in
            (error as? URLError)?.code == .cannotParseResponse
        }
        await #expect {
            _ = try await session.directoryListing(from: archive.url("no/such/dir/"))
        } throws: { error in
            (error as? URLError)?.code == .fileDoesNotExist
        }
    }

    @Test func listingsCarryLinksModesDatesAndNames() async throws {
        try InstalledPlugins.install()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-zip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var writer = ZipArchiveWriter()
        writer.add("link", Data("docs/index.html".utf8), mode: 0o120777)
        writer.add("dos.txt", Data("dos".utf8), system: 0)    // MS-DOS: no Unix mode, so no permissions
        // 2024-05-06 07:08:10 in DOS date and time.
        writer.add("dated.txt", Data("d".utf8), modified: (date: 44 << 9 | 5 << 5 | 6, time: 7 << 11 | 8 << 5 | 5))
        writer.add("café \"quoted\".txt", Data("q".utf8), mode: 0o100600)
        writer.add("a/b/c.txt", Data("c".utf8))
        writer.add("../escape.txt", Data("x".utf8))          // never listed as `..`
        writer.add("./dot.txt", Data("x".utf8))              // nor as `.`
        let file = directory.appendingPathComponent("special.zip")
        try writer.data.write(to: file)
        var components = URLComponents()
        components.scheme = "zip"
        components.host = ""
        components.path = file.path + "!/"
        let url = try #require(components.url)

        let (entries, response) = try await makeSession().directoryListing(from: url)
        #expect(response.mimeType == URLDirectoryListing.mimeType)
        let dated = try Date("2024-05-06T07:08:10Z", strategy: .iso8601)
        #expect(entries == [
            URLDirectoryEntry(name: "a", type: .directory),
            URLDirectoryEntry(name: "café \"quoted\".txt", type: .file, size: 1, modificationDate: Self.dosEpoch,
                              permissions: 0o600),
            URLDirectoryEntry(name: "dated.txt", type: .file, size: 1, modificationDate: dated, permissions: 0o644),
            URLDirectoryEntry(name: "dos.txt", type: .file, size: 3, modificationDate: Self.dosEpoch),
            URLDirectoryEntry(name: "link", type: .symbolicLink, size: 15, modificationDate: Self.dosEpoch,
                              permissions: 0o777, symbolicLinkDestination: "docs/index.html"),
        ])
        let body = await fetch(url)
        #expect(body.data == URLDirectoryListing.encode(entries))
        #expect(body.text.contains(#""symbolicLinkDestination":"docs/index.html""#), "slashes are not escaped")
        #expect(body.text.contains(#""name":"café \"quoted\".txt""#), "UTF-8 as is, quotes escaped")
    }

    @Test func compressedEntriesAreInflated() async throws {
        try InstalledPlugins.install()
        let fixture = PluginProducts.repositoryRoot.appendingPathComponent("Tests/PluginTests/Fixtures/deflated.zip")
        let readme = try #require(URL(string: "zip://\(fixture.path)!/docs/readme.txt"))
        let result = await fetch(readme)
        #expect(result.error == nil, "\(String(describing: result.error))")
        #expect(result.text == String(repeating: "Courier reads this entry through its zip plugin.\n", count: 200))
        let json = await fetch(try #require(URL(string: "zip://\(fixture.path)!/data.json")))
        #expect(json.response?.mimeType == "application/json")
        #expect(json.text.contains("\"compressed\": true"))
    }

    @Test func missingArchivesEntriesAndNonArchivesFailWithURLErrors() async throws {
        let archive = try Archive()
        defer { archive.remove() }
        let missingEntry = archive.url("nothing.txt")
        let entryResult = await fetch(missingEntry)
        #expect(entryResult.urlError?.code == .fileDoesNotExist)
        #expect(entryResult.urlError?.failingURL == missingEntry)

        let missingArchive = try #require(URL(string: "zip:///nonexistent-\(UUID().uuidString).zip!/a.txt"))
        #expect(await fetch(missingArchive).urlError?.code == .fileDoesNotExist)

        let notZip = archive.directory.appendingPathComponent("plain.txt")
        try Data("not a zip archive".utf8).write(to: notZip)
        let notZipResult = await fetch(try #require(URL(string: "zip://\(notZip.path)!/a.txt")))
        #expect(notZipResult.urlError?.code == .cannotDecodeRawData)

        let escape = try #require(URL(string: "zip://\(archive.file.path)!/../etc/passwd"))
        #expect(await fetch(escape).urlError?.code == .badURL)

        // Writing is not among the zip scheme's capabilities.
        var put = URLRequest(url: archive.url("readme.txt"))
        put.httpMethod = "PUT"
        put.httpBody = Data("new".utf8)
        #expect(await fetch(put).urlError?.code == .unsupportedURL)
    }

    @Test func theAsyncAndDownloadAPIsWork() async throws {
        let archive = try Archive()
        defer { archive.remove() }
        let session = makeSession()
        let (data, response) = try await session.data(from: archive.url("docs/index.html"))
        #expect(data == Archive.page)
        #expect(response.mimeType == "text/html")
        let (file, downloadResponse) = try await session.download(from: archive.url("readme.txt"))
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(try Data(contentsOf: file) == Archive.readme)
        #expect(downloadResponse.expectedContentLength == Int64(Archive.readme.count))
    }

    @Test func downloadsReportProgressAgainstTheEntrySize() async throws {
        let archive = try Archive(large: true)
        defer { archive.remove() }
        let delegate = RecordingDelegate()
        let session = makeSession(delegate: delegate)
        session.downloadTask(with: archive.url("large.bin")).resume()
        #expect(await delegate.waitForCompletion())
        let record = delegate.record.current
        #expect(record.error == nil)
        #expect(record.downloaded.map { $0 == Archive.large } == true)
        #expect(record.writes.count >= 1)
        #expect(record.writes.allSatisfy { $0.2 == Int64(Archive.large.count) })
        #expect(record.writes.last?.1 == Int64(Archive.large.count))
    }

    /// Starts a download of `url` and cancels it, producing resume data, once the first bytes are
    /// on disk. The plugin may finish before the cancel lands (it is fast); then it tries again, up
    /// to three times.
    private func resumeDataForCancelledDownload(of url: URL) async -> Data? {
        for _ in 0..<3 {
            let delegate = RecordingDelegate()
            let resumeData = Locked<Data?>(nil)
            let cancelled = Locked(false)
            delegate.onProgress = { task in
                guard let download = task as? URLSessionDownloadTask,
                      cancelled.withLock({ value in defer { value = true }; return !value }) else { return }
                download.cancel { data in resumeData.withLock { $0 = data } }
            }
            makeSession(delegate: delegate).downloadTask(with: url).resume()
            guard await delegate.waitForCompletion() else { return nil }
            guard (delegate.record.current.error as? URLError)?.code == .cancelled else { continue }
            if await waitUntil({ resumeData.current != nil }) { return resumeData.current }
        }
        return nil
    }

    @Test func aCancelledDownloadResumesWhereItStopped() async throws {
        let archive = try Archive(large: true)
        defer { archive.remove() }
        let data = try #require(await resumeDataForCancelledDownload(of: archive.url("large.bin")))

        let second = RecordingDelegate()
        let resumedSession = makeSession(delegate: second)
        resumedSession.downloadTask(withResumeData: data).resume()
        #expect(await second.waitForCompletion())
        let record = second.record.current
        #expect(record.error == nil, "\(String(describing: record.error))")
        let resumedAt = try #require(record.resumedAt, "the plugin did not resume")
        #expect(resumedAt.offset > 0)
        #expect(resumedAt.expected == Int64(Archive.large.count))
        #expect(record.downloaded.map { $0 == Archive.large } == true, "the resumed file differs")
    }

    @Test func aChangedArchiveIsDownloadedAgainFromTheStart() async throws {
        let archive = try Archive(large: true)
        defer { archive.remove() }
        let data = try #require(await resumeDataForCancelledDownload(of: archive.url("large.bin")))
        // Replace the archive: same entry name, other content.
        var writer = ZipArchiveWriter()
        let replacement = Data(repeating: 7, count: 100_000)
        writer.add("large.bin", replacement)
        try writer.data.write(to: archive.file)

        let second = RecordingDelegate()
        makeSession(delegate: second).downloadTask(withResumeData: data).resume()
        #expect(await second.waitForCompletion())
        #expect(second.record.current.resumedAt == nil)
        #expect(second.record.current.downloaded == replacement)
    }
}
