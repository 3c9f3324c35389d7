import Foundation
import Testing
@testable import Courier
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `file:` URLs loaded through `URLSession`: small files, errors and the async API.
@Suite("FileURLProtocol")
struct FileURLProtocolTests {

    // MARK: - Data tasks

    @Test(arguments: [
        ("data.json", "application/json"),
        ("notes.txt", "text/plain"),
        ("NOTES.TXT", "text/plain"),
        ("blob.qqzzyx", "application/octet-stream"),
        ("no-extension", "application/octet-stream"),
    ])
    func dataTaskReadsTheFile(name: String, mimeType: String) async throws {
        let directory = try LocalTempDirectory()
        defer { directory.remove() }
        let contents = Data("{\"greeting\": \"héllo\"}\nline two\n".utf8)
        let file = try directory.file(name, contents)

        let (data, maybeResponse, error) = try await LocalTestSupport.load(file)
        #expect(error == nil)
        #expect(data == contents)
        let response = try #require(maybeResponse)
        #expect(response.mimeType == mimeType)
        #expect(response.expectedContentLength == Int64(contents.count))
        #expect(response.url == file)
        #expect(response.textEncodingName == nil)
        #expect(!(response is HTTPURLResponse))
    }

    @Test func emptyFile() async throws {
        let directory = try LocalTempDirectory()
        defer { directory.remove() }
        let file = try directory.file("empty.txt", Data())
        let (data, response, error) = try await LocalTestSupport.load(file)
        #expect(error == nil)
        #expect(data == Data())
        #expect(response?.expectedContentLength == 0)
        #expect(response?.mimeType == "text/plain")
    }

    @Test func localhostAndEscapedPaths() async throws {
        let directory = try LocalTempDirectory()
        defer { directory.remove() }
        let contents = Data("spaces and accents".utf8)
        let file = try directory.file("a file é.txt", contents)
        #expect(file.absoluteString.contains("%20"))
        let (data, _, error) = try await LocalTestSupport.load(file)
        #expect(error == nil)
        #expect(data == contents)

        // file://localhost/… is this machine too.
        let escapedPath = try #require(file.path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed))
        let localhost = try #require(URL(string: "file://localhost" + escapedPath))
        let (viaLocalhost, response, localhostError) = try await LocalTestSupport.load(localhost)
        #expect(localhostError == nil)
        #expect(viaLocalhost == contents)
        #expect(response?.url == localhost)
    }

    @Test func dataDelegateReceivesResponseAndBody() async throws {
        let directory = try LocalTempDirectory()
        defer { directory.remove() }
        let contents = try LocalTestSupport.randomBytes(100_000)
        let file = try directory.file("random.bin", contents)
        let recorder = LocalDataRecorder(expected: contents)
        let session = LocalTestSupport.session(delegate: recorder)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: file)
        task.resume()
        #expect(await LocalTestSupport.eventually { recorder.completed })
        #expect(recorder.error == nil)
        #expect(recorder.body == contents)
        #expect(recorder.mismatch == nil)
        #expect(recorder.response?.expectedContentLength == 100_000)
        #expect(recorder.response?.mimeType == "application/octet-stream")
        #expect(task.countOfBytesReceived == 100_000)
        #expect(task.countOfBytesExpectedToReceive == 100_000)
        #expect(task.state == .completed)
    }

    // MARK: - Errors

    @Test func missingFile() async throws {
        let directory = try LocalTempDirectory()
        defer { directory.remove() }
        let file = directory.url.appendingPathComponent("does-not-exist.txt")
        let error = try await LocalTestSupport.loadError(file)
        #expect(error?.code == .fileDoesNotExist)
        #expect(error?.failingURL == file)
    }

    @Test func pathThroughARegularFile() async throws {
        // ENOTDIR: a path component is a file, so the file cannot exist.
        let directory = try LocalTempDirectory()
        defer { directory.remove() }
        let file = try directory.file("plain.txt", Data("x".utf8))
        let below = file.appendingPathComponent("child.txt")
        let error = try await LocalTestSupport.loadError(below)
        #expect(error?.code == .fileDoesNotExist)
        #expect(error?.failingURL == below)
    }

    @Test func symbolicLinks() async throws {
        let directory = try LocalTempDirectory()
        defer { directory.remove() }
        let contents = Data("through a link".utf8)
        let target = try directory.file("target.txt", contents)
        let fileLink = directory.url.appendingPathComponent("link.json")
        try FileManager.default.createSymbolicLink(at: fileLink, withDestinationURL: target)
        let directoryLink = directory.url.appendingPathComponent("dir-link")
        try FileManager.default.createSymbolicLink(at: directoryLink, withDestinationURL: directory.url)
        let danglingLink = directory.url.appendingPathComponent("dangling.txt")
        try FileManager.default.createSymbolicLink(atPath: danglingLink.path, withDestinationPath: directory.url.appendingPathComponent("gone").path)

        // A link to a file loads the file; the MIME type comes from the URL's own extension.
        let (data, response, error) = try await LocalTestSupport.load(fileLink)
        #expect(error == nil)
        #expect(data == contents)
        #expect(response?.mimeType == "application/json")
        // A link to a directory lists the directory.
        let (_, linkResponse, linkError) = try await LocalTestSupport.load(directoryLink)
        #expect(linkError == nil)
        #expect(linkResponse?.mimeType == URLDirectoryListing.mimeType)
        let dangling = try await LocalTestSupport.loadError(danglingLink)
        #expect(dangling?.code == .fileDoesNotExist)
        #expect(dangling?.failingURL == danglingLink)
    }

    @Test func directoryIsListed() async throws {
        let directory = try LocalTempDirectory()
        defer { directory.remove() }
        let file = try directory.file("b.txt", Data("twelve bytes".utf8))
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: file.path)
        try FileManager.default.createDirectory(at: directory.url.appendingPathComponent("a dir"), withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: directory.url.appendingPathComponent("c-link").path, withDestinationPath: "b.txt")
        for target in [directory.url, try #require(URL(string: "file://" + directory.url.path)),
                       try #require(URL(string: "file://localhost" + directory.url.path + "/"))] {
            let (data, response, error) = try await LocalTestSupport.load(target)
            #expect(error == nil, "\(target)")
            #expect(response?.mimeType == URLDirectoryListing.mimeType)
            #expect(response?.expectedContentLength == Int64(data?.count ?? -1))
            let entries = try URLDirectoryListing.decode(try #require(data))
            #expect(entries.map(\.name) == ["a dir", "b.txt", "c-link"])
            #expect(entries.map(\.type) == [.directory, .file, .symbolicLink])
            #expect(entries[1].size == 12)
            #expect(entries[1].permissions == 0o640)
            #expect(entries[2].symbolicLinkDestination == "b.txt")
            let modified = try #require(entries[1].modificationDate)
            #expect(abs(modified.timeIntervalSinceNow) < 600)
        }
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let listed = try await LocalTestSupport.withTimeout { try await session.directoryListing(from: directory.url).0 }
        #expect(listed.count == 3)
        // A file is not a listing.
        await #expect(throws: URLError.self) {
            _ = try await LocalTestSupport.withTimeout { try await session.directoryListing(from: file).0 }
        }
    }

    @Test(.enabled(if: !LocalTestSupport.isRoot, "root can read a file whatever its mode"))
    func unreadableFile() async throws {
        let directory = try LocalTempDirectory()
        defer { directory.remove() }
        let file = try directory.file("secret.txt", Data("secret".utf8))
        try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: file.path)
        let error = try await LocalTestSupport.loadError(file)
        #expect(error?.code == .noPermissionsToReadFile)
        #expect(error?.failingURL == file)
    }

    @Test func otherHostIsUnsupported() async throws {
        for string in ["file://otherhost/x", "file://example.com/etc/hostname", "FILE://otherhost/tmp/x"] {
            let target = try #require(URL(string: string))
            let error = try await LocalTestSupport.loadError(target)
            #expect(error?.code == .unsupportedURL, "\(string)")
            #expect(error?.failingURL == target, "\(string)")
        }
    }

    @Test func errorsReachTheDelegateWithFailingURL() async throws {
        let directory = try LocalTempDirectory()
        defer { directory.remove() }
        let recorder = LocalDataRecorder()
        let session = LocalTestSupport.session(delegate: recorder)
        defer { session.finishTasksAndInvalidate() }
        let missing = directory.url.appendingPathComponent("gone.bin")
        let task = session.dataTask(with: missing)
        task.resume()
        #expect(await LocalTestSupport.eventually { recorder.completed })
        let error = try #require(recorder.error as? URLError)
        #expect(error.code == .fileDoesNotExist)
        #expect(error.failingURL == missing)
        #expect(recorder.response == nil)
        #expect(recorder.chunkCount == 0)
        #expect((task.error as? URLError)?.code == .fileDoesNotExist)
    }

    // MARK: - async API

    @Test func asyncData() async throws {
        let directory = try LocalTempDirectory()
        defer { directory.remove() }
        let contents = Data("[1, 2, 3]".utf8)
        let file = try directory.file("list.json", contents)
        let (data, response) = try await LocalTestSupport.withTimeout {
            try await URLSession(configuration: .ephemeral).data(from: file)
        }
        #expect(data == contents)
        #expect(response.mimeType == "application/json")
        #expect(response.expectedContentLength == Int64(contents.count))

        let missing = directory.url.appendingPathComponent("missing.json")
        await #expect {
            _ = try await LocalTestSupport.withTimeout { try await URLSession(configuration: .ephemeral).data(from: missing) }
        } throws: { error in
            (error as? URLError)?.code == .fileDoesNotExist && (error as? URLError)?.failingURL == missing
        }
    }

    @Test func asyncDownload() async throws {
        let directory = try LocalTempDirectory()
        defer { directory.remove() }
        let contents = try LocalTestSupport.randomBytes(3 << 20 + 17)
        let file = try directory.file("archive.bin", contents)
        let (location, response) = try await LocalTestSupport.withTimeout {
            try await URLSession(configuration: .ephemeral).download(from: file)
        }
        defer { try? FileManager.default.removeItem(at: location) }
        #expect(location != file)
        #expect(location.isFileURL)
        #expect(try Data(contentsOf: location) == contents)
        #expect(response.expectedContentLength == Int64(contents.count))
        #expect(response.url == file)
        // The source is untouched.
        #expect(try Data(contentsOf: file) == contents)

        let missing = directory.url.appendingPathComponent("missing.bin")
        await #expect {
            _ = try await LocalTestSupport.withTimeout { try await URLSession(configuration: .ephemeral).download(from: missing) }
        } throws: { error in
            (error as? URLError)?.code == .fileDoesNotExist && (error as? URLError)?.failingURL == missing
        }
    }

    @Test func asyncBytesLinesWithMixedLineEnds() async throws {
        let directory = try LocalTempDirectory()
        defer { directory.remove() }
        let text = "alpha\nbeta\r\ngamma\rdelta\nεψιλον\r\nlast line without newline"
        let file = try directory.file("lines.txt", Data(text.utf8))
        let lines = try await LocalTestSupport.withTimeout { () -> [String] in
            let (bytes, response) = try await URLSession(configuration: .ephemeral).bytes(from: file)
            #expect(response.mimeType == "text/plain")
            #expect(response.expectedContentLength == Int64(text.utf8.count))
            var lines: [String] = []
            for try await line in bytes.lines { lines.append(line) }
            return lines
        }
        #expect(lines == ["alpha", "beta", "gamma", "delta", "εψιλον", "last line without newline"])
    }

    @Test func asyncBytesLinesEndingWithCR() async throws {
        let directory = try LocalTempDirectory()
        defer { directory.remove() }
        let file = try directory.file("cr.txt", Data("one\rtwo\r".utf8))
        let lines = try await LocalTestSupport.withTimeout { () -> [String] in
            let (bytes, _) = try await URLSession(configuration: .ephemeral).bytes(from: file)
            var lines: [String] = []
            for try await line in bytes.lines { lines.append(line) }
            return lines
        }
        #expect(lines == ["one", "two"])
    }

    @Test func asyncBytesAreTheFile() async throws {
        let directory = try LocalTempDirectory()
        defer { directory.remove() }
        let contents = try LocalTestSupport.randomBytes(70_000)
        let file = try directory.file("bytes.bin", contents)
        let read = try await LocalTestSupport.withTimeout { () -> Data in
            let (bytes, _) = try await URLSession(configuration: .ephemeral).bytes(from: file)
            var read = Data()
            for try await byte in bytes { read.append(byte) }
            return read
        }
        #expect(read == contents)
    }

    @Test func asyncBytesOfAMissingFileThrows() async throws {
        let directory = try LocalTempDirectory()
        defer { directory.remove() }
        let missing = directory.url.appendingPathComponent("nope.txt")
        await #expect {
            _ = try await LocalTestSupport.withTimeout { try await URLSession(configuration: .ephemeral).bytes(from: missing) }
        } throws: { error in
            (error as? URLError)?.code == .fileDoesNotExist && (error as? URLError)?.failingURL == missing
        }
    }
}
