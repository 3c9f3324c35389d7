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

    @Test func directoriesAreListed() async throws {
        let archive = try Archive()
        defer { archive.remove() }
        let root = await fetch(archive.url(""))
        #expect(root.error == nil)
        #expect(root.response?.mimeType == "text/plain")
        #expect(root.response?.textEncodingName == "utf-8")
        #expect(root.text == "docs/\nname with spaces.txt\nreadme.txt\n")
        let docs = await fetch(archive.url("docs/"))
        #expect(docs.text == "deep/\nindex.html\n")
        // A directory that exists only as a prefix of its entries.
        let deep = await fetch(archive.url("docs/deep"))
        #expect(deep.text == "note.json\n")
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
