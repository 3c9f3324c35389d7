import Foundation
import Testing
@testable import Courier

@Suite("async/await API")
struct AsyncAPITests {

    @Test("data(for:) and data(from:) return the body and response")
    func data() async throws {
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let (body, response) = try await withTimeout { try await session.data(for: URLRequest(url: URL(string: "data:text/plain;charset=utf-8,caf%C3%A9")!)) }
        #expect(String(decoding: body, as: UTF8.self) == "café")
        #expect(response.mimeType == "text/plain")
        #expect(response.textEncodingName == "utf-8")

        let content = TestFiles.bytes(count: 2_000_000, seed: 61)
        let file = try TestFiles.make(content)
        defer { TestFiles.remove(file) }
        let (fileBody, fileResponse) = try await withTimeout { try await session.data(from: file) }
        #expect(fileBody == content)
        #expect(fileResponse.url == file)
        #expect(fileResponse.expectedContentLength == Int64(content.count))
    }

    @Test("data(for:delegate:) sends task-level messages to that delegate")
    func dataWithDelegate() async throws {
        let delegate = EventDelegate()
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let (body, _) = try await withTimeout { try await session.data(from: URL(string: "data:,x")!, delegate: delegate) }
        #expect(body == Data("x".utf8))
        #expect(await delegate.waitForEvent { $0.name == "metrics" })
    }

    @Test("errors are thrown as URLError with failingURL")
    func dataError() async throws {
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let url = URL(string: "courier-unknown-async://x")!
        await #expect(throws: URLError.self) { _ = try await withTimeout { try await session.data(from: url) } }
        do {
            _ = try await withTimeout { try await session.data(from: url) }
        } catch let error as URLError {
            #expect(error.code == .unsupportedURL)
            #expect(error.failingURL == url)
        }
    }

    @Test("upload(for:from:) and upload(for:fromFile:) send the body")
    func upload() async throws {
        let session = EchoURLProtocol.session()
        defer { session.invalidateAndCancel() }
        var put = URLRequest(url: EchoURLProtocol.makeURL())
        put.httpMethod = "PUT"
        let request = put
        let payload = TestFiles.bytes(count: 200_000, seed: 62)
        let (echo, response) = try await withTimeout { try await session.upload(for: request, from: payload) }
        #expect(echo == payload)
        #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-Method") == "PUT")

        let file = try TestFiles.make(payload)
        defer { TestFiles.remove(file) }
        let (fileEcho, fileResponse) = try await withTimeout { try await session.upload(for: request, fromFile: file) }
        #expect(fileEcho == payload)
        #expect((fileResponse as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-Body-Source") == "stream")
    }

    @Test("download(for:) returns a file that survives until the caller removes it")
    func download() async throws {
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let content = TestFiles.bytes(count: 1_234_567, seed: 63)
        let file = try TestFiles.make(content)
        defer { TestFiles.remove(file) }
        let (location, response) = try await withTimeout { try await session.download(for: URLRequest(url: file)) }
        defer { try? FileManager.default.removeItem(at: location) }
        #expect(response.url == file)
        await settle(0.2)
        #expect(FileManager.default.fileExists(atPath: location.path))
        #expect(try Data(contentsOf: location) == content)

        let (second, _) = try await withTimeout { try await session.download(from: URL(string: "data:,small")!) }
        defer { try? FileManager.default.removeItem(at: second) }
        #expect(try Data(contentsOf: second) == Data("small".utf8))
        #expect(second != location)
    }

    @Test("download(resumeFrom:) with garbage throws a URLError instead of crashing")
    func downloadGarbageResumeData() async throws {
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        for garbage in [Data(), Data("not resume data".utf8), Data([0xFF, 0x00, 0x13]), Data(#"{"format":"courier.download-resume","version":99}"#.utf8)] {
            do {
                _ = try await withTimeout { try await session.download(resumeFrom: garbage) }
                Issue.record("garbage resume data \(garbage) did not fail")
            } catch let error as URLError {
                #expect(error.code == .cannotDecodeRawData)
            }
        }
    }

    @Test("bytes(for:) streams the body; .lines splits LF, CRLF and CR")
    func bytesAndLines() async throws {
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let text = "first\nsecond\r\nthird\rfourth"
        let encoded = text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let lines = try await withTimeout { () -> [String] in
            let (bytes, response) = try await session.bytes(for: URLRequest(url: URL(string: "data:text/plain,\(encoded)")!))
            #expect(response.mimeType == "text/plain")
            var lines: [String] = []
            for try await line in bytes.lines { lines.append(line) }
            return lines
        }
        #expect(lines == ["first", "second", "third", "fourth"])
    }

    /// Reads `file` with `bytes(from:)`, waiting `delay` seconds before the first byte; returns the
    /// count and a checksum.
    private func readBytes(of file: URL, delay: TimeInterval) async throws -> (Int, UInt64) {
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        return try await withTimeout(20, "reading \(file.lastPathComponent)") { () -> (Int, UInt64) in
            let (bytes, response) = try await session.bytes(from: file)
            #expect(response.url == file)
            if delay > 0 { try await Task.sleep(nanoseconds: UInt64(delay * 1e9)) }
            var count = 0
            var checksum: UInt64 = 0
            for try await byte in bytes {
                checksum = checksum &* 31 &+ UInt64(byte)
                count += 1
            }
            return (count, checksum)
        }
    }

    @Test("bytes(for:) delivers every byte of a file, in order")
    func bytesFile() async throws {
        let content = TestFiles.bytes(count: 3 * 1024 * 1024 + 5, seed: 64)
        let file = try TestFiles.make(content)
        defer { TestFiles.remove(file) }
        let received = try await readBytes(of: file, delay: 0)
        #expect(received.0 == content.count)
        #expect(received.1 == content.reduce(UInt64(0)) { $0 &* 31 &+ UInt64($1) })
    }

    @Test("bytes(for:) delivers every byte of a body larger than its buffer, read slowly")
    func bytesLargeBodyReadLate() async throws {
        let content = TestFiles.bytes(count: 6 * 1024 * 1024 + 5, seed: 65)
        let file = try TestFiles.make(content)
        defer { TestFiles.remove(file) }
        let received = try await readBytes(of: file, delay: 0.5)
        #expect(received.0 == content.count)
        #expect(received.1 == content.reduce(UInt64(0)) { $0 &* 31 &+ UInt64($1) })
    }

    @Test("bytes(for:) throws the load's error")
    func bytesError() async throws {
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        do {
            _ = try await withTimeout { try await session.bytes(from: URL(string: "courier-unknown-bytes://x")!) }
            Issue.record("bytes(from:) of an unknown scheme did not throw")
        } catch let error as URLError {
            #expect(error.code == .unsupportedURL)
        }
    }

    /// Starts `operation` in a Swift task, waits for the protocol to start, cancels the Swift task
    /// and returns what it threw.
    private func cancelWhileLoading(_ url: URL, _ operation: @escaping @Sendable () async throws -> Void) async throws -> (any Error)? {
        let task = Task { () -> (any Error)? in
            do { try await operation(); return nil } catch { return error }
        }
        _ = try await ControlledURLProtocol.waitForStart(of: url)
        task.cancel()
        return try await withTimeout(testWaitLimit, "the cancelled Swift task") { await task.value }
    }

    @Test("cancelling the Swift task cancels data(for:) with URLError.cancelled")
    func cancelData() async throws {
        let session = ControlledURLProtocol.session()
        defer { session.invalidateAndCancel() }
        let url = ControlledURLProtocol.makeURL()
        let error = try await cancelWhileLoading(url) { _ = try await session.data(from: url) }
        #expect((error as? URLError)?.code == .cancelled)
        #expect(await waitUntil { ControlledURLProtocol.stopCount(url) == 1 })
    }

    @Test("cancelling the Swift task cancels download(for:) and bytes(for:)")
    func cancelDownloadAndBytes() async throws {
        let session = ControlledURLProtocol.session()
        defer { session.invalidateAndCancel() }
        let downloadURL = ControlledURLProtocol.makeURL("download")
        let downloadError = try await cancelWhileLoading(downloadURL) { _ = try await session.download(from: downloadURL) }
        #expect((downloadError as? URLError)?.code == .cancelled)

        let bytesURL = ControlledURLProtocol.makeURL("bytes")
        let bytesError = try await cancelWhileLoading(bytesURL) { _ = try await session.bytes(from: bytesURL) }
        #expect((bytesError as? URLError)?.code == .cancelled)

        // Cancelled while reading the body.
        let readingURL = ControlledURLProtocol.makeURL("reading")
        let reader = Task { () -> (any Error)? in
            do {
                let (bytes, _) = try await session.bytes(from: readingURL)
                for try await _ in bytes {}
                return nil
            } catch { return error }
        }
        let server = try await ControlledURLProtocol.waitForStart(of: readingURL)
        server.respond()
        server.send(Data("some".utf8))
        await settle(0.2)
        reader.cancel()
        let readingError = try await withTimeout { await reader.value }
        #expect((readingError as? URLError)?.code == .cancelled)
    }

    @Test("a Swift task cancelled before the call fails at once with cancelled")
    func alreadyCancelled() async throws {
        let session = ControlledURLProtocol.session()
        defer { session.invalidateAndCancel() }
        let url = ControlledURLProtocol.makeURL()
        let task = Task { () -> (any Error)? in
            withUnsafeCurrentTask { $0?.cancel() }
            do { _ = try await session.data(from: url); return nil } catch { return error }
        }
        let error = try await withTimeout { await task.value }
        #expect((error as? URLError)?.code == .cancelled)
    }
}
