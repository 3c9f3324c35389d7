import Foundation
import Testing
@testable import Courier

/// The gopher plugin (`Plugins/Gopher`, written in C), loaded from a directory and fetched through
/// URLSession's data, download and async APIs from a gopher server on loopback.
@Suite("Gopher plugin")
struct GopherPluginTests {
    private func server() throws -> GopherTestServer {
        try InstalledPlugins.install()
        return try #require(GopherTestServer.shared, "the test gopher server did not start")
    }

    @Test func aTextFileArrivesUnstuffedWithoutItsTerminator() async throws {
        let server = try server()
        let result = await fetch(server.url("/0/hello.txt"))
        #expect(result.error == nil, "\(String(describing: result.error))")
        #expect(result.text == GopherTestServer.helloText)
        #expect(result.response?.mimeType == "text/plain")
        #expect(result.response?.expectedContentLength == -1)
        #expect(result.response?.url == server.url("/0/hello.txt"))
        #expect(!(result.response is HTTPURLResponse))
    }

    @Test func menusArriveAsGopherMenus() async throws {
        let server = try server()
        let root = await fetch(server.url())
        #expect(root.error == nil)
        #expect(root.response?.mimeType == "application/gopher-menu")
        #expect(root.text == String(GopherTestServer.rootMenu.dropLast(2)))
        let docs = await fetch(server.url("/1/docs"))
        #expect(docs.text == String(GopherTestServer.docsMenu.dropLast(2)))
        #expect(server.selectors.contains("/docs"))
    }

    @Test func binaryFilesArriveByteForByte() async throws {
        let server = try server()
        let result = await fetch(server.url("/9/blob.bin"))
        #expect(result.error == nil)
        #expect(result.response?.mimeType == "application/octet-stream")
        #expect(result.data == GopherTestServer.blob)
    }

    @Test func searchesSendTheirTermsAfterATab() async throws {
        let server = try server()
        let result = await fetch(server.url("/7/search%09plugins%20in%20C"))
        #expect(result.text.hasPrefix("iYou searched for plugins in C\t"))
        #expect(server.selectors.contains("/search\tplugins in C"))
    }

    @Test func theAsyncAPIsWork() async throws {
        let server = try server()
        let session = makeSession()
        let (data, response) = try await session.data(from: server.url("/0/hello.txt"))
        #expect(String(decoding: data, as: UTF8.self) == GopherTestServer.helloText)
        #expect(response.mimeType == "text/plain")
        let (file, _) = try await session.download(from: server.url("/9/blob.bin"))
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(try Data(contentsOf: file) == GopherTestServer.blob)
        var lines: [String] = []
        let (bytes, _) = try await session.bytes(from: server.url("/0/hello.txt"))
        for try await line in bytes.lines { lines.append(line) }
        #expect(lines == ["Hello, gopher.", ".a line that starts with a dot", "last line"])
    }

    @Test func aDownloadTaskWritesTheFileAndReportsProgress() async throws {
        let server = try server()
        let delegate = RecordingDelegate()
        let session = makeSession(delegate: delegate)
        session.downloadTask(with: server.url("/9/big.bin")).resume()
        #expect(await delegate.waitForCompletion())
        let record = delegate.record.current
        #expect(record.error == nil)
        #expect(record.downloaded == GopherTestServer.big)
        #expect(record.writes.count >= 1)
        #expect(record.writes.last?.1 == Int64(GopherTestServer.big.count))
        #expect(record.writes.allSatisfy { $0.2 == NSURLSessionTransferSizeUnknown })
        let totals = record.writes.map(\.1)
        #expect(totals == totals.sorted())
    }

    @Test func dataArrivesInChunksAsTheServerSendsIt() async throws {
        let server = try server()
        let delegate = RecordingDelegate()
        let session = makeSession(delegate: delegate)
        let task = session.dataTask(with: server.url("/9/slow.bin"))
        task.resume()
        #expect(await delegate.waitForCompletion())
        let record = delegate.record.current
        #expect(record.error == nil)
        #expect(record.body.count == GopherTestServer.slowChunk * GopherTestServer.slowChunks)
        #expect(record.chunks.count >= 2, "the body came in \(record.chunks.count) pieces")
        #expect(task.countOfBytesReceived == Int64(record.body.count))
        #expect(task.progress.completedUnitCount == Int64(record.body.count))
    }

    @Test func aMissingSelectorIsFileDoesNotExist() async throws {
        let server = try server()
        let url = server.url("/0/missing.txt")
        let result = await fetch(url)
        #expect(result.urlError?.code == .fileDoesNotExist)
        #expect(result.urlError?.failingURL == url)
        #expect(result.urlError?.localizedDescription.contains("does not exist") == true)
    }

    @Test func aClosedPortIsCannotConnectToHost() async throws {
        try InstalledPlugins.install()
        // Bind a port and close it again: nothing listens there now.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 ? getsockname(fd, $0, &length) : -1 }
        }
        let port = UInt16(bigEndian: address.sin_port)
        close(fd)
        let url = URL(string: "gopher://127.0.0.1:\(port)/")!
        let result = await fetch(url)
        #expect(result.urlError?.code == .cannotConnectToHost)
        #expect(result.urlError?.failingURL == url)
    }

    @Test func aMalformedURLIsBadURL() async throws {
        try InstalledPlugins.install()
        let result = await fetch(URL(string: "gopher://127.0.0.1:99999/")!)
        #expect(result.urlError?.code == .badURL)
        let telnet = await fetch(URL(string: "gopher://127.0.0.1:70/8telnet")!)
        #expect(telnet.urlError?.code == .unsupportedURL)
    }

    @Test func aTaskIsCancelledLikeABuiltInOne() async throws {
        let server = try server()
        let before = server.openConnections
        let delegate = RecordingDelegate()
        let session = makeSession(delegate: delegate)
        let task = session.dataTask(with: server.url("/9/hang"))
        task.resume()
        #expect(await waitUntil { server.selectors.contains("/hang") })
        task.cancel()
        #expect(await delegate.waitForCompletion())
        #expect((delegate.record.current.error as? URLError)?.code == .cancelled)
        #expect(task.state == .completed)
        // The plugin closed its connection when stopped.
        #expect(await waitUntil { server.openConnections <= before })
    }

    @Test func aTaskTimesOutLikeABuiltInOne() async throws {
        let server = try server()
        let session = makeSession(requestTimeout: 0.5)
        let url = server.url("/9/hang")
        let started = Date()
        let result = await fetch(url, session: session)
        #expect(result.urlError?.code == .timedOut)
        #expect(result.urlError?.failingURL == url)
        #expect(Date().timeIntervalSince(started) < 5)
    }

    @Test func suspendingPausesTheTransfer() async throws {
        let server = try server()
        let delegate = RecordingDelegate()
        let session = makeSession(delegate: delegate)
        let task = session.dataTask(with: server.url("/9/slow.bin"))
        let claimed = Locked(false)
        let suspended = Locked(false)
        delegate.onProgress = { task in
            guard claimed.withLock({ value in defer { value = true }; return !value }) else { return }
            task.suspend()
            suspended.withLock { $0 = true }
        }
        task.resume()
        #expect(await waitUntil { suspended.current })
        let received = task.countOfBytesReceived
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(!delegate.record.current.completed, "the task completed while suspended")
        #expect(delegate.record.current.body.count <= Int(received) + 2 * GopherTestServer.slowChunk)
        task.resume()
        #expect(await delegate.waitForCompletion())
        #expect(delegate.record.current.body.count == GopherTestServer.slowChunk * GopherTestServer.slowChunks)
    }
}
