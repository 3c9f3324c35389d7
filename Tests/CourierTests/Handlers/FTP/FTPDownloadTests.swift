import Foundation
import Testing
@testable import Courier

/// Downloads from the pyftpdlib servers: anonymous and with a login, data, download and async tasks,
/// streaming of a large file, passive and active mode, servers that answer 125 and lack EPSV/MLSD, a
/// data connection dropped mid-transfer, and missing files.
@Suite("FTP downloads", .serialized)
struct FTPDownloadTests {
    @Test func anonymousDataTask() async throws {
        let server = try await FTPTest.servers()
        let session = FTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let result = try await session.loadData(server.url("/hello.txt"))
        #expect(result.error == nil)
        #expect(result.data == Data("Hello, Courier!\n".utf8))
        let response = try #require(result.response)
        #expect(!(response is HTTPURLResponse))
        #expect(response.mimeType == "text/plain")
        #expect(response.expectedContentLength == 16)
        #expect(response.url == server.url("/hello.txt"))
        #expect(response.suggestedFilename == "hello.txt")
    }

    @Test func loginFromTheURLAndAsyncDownload() async throws {
        let server = try await FTPTest.servers()
        let session = FTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/medium.bin", user: FTPTestServer.user, password: FTPTestServer.password)
        let (location, response) = try await withTimeout(30) { try await session.download(from: url) }
        defer { try? FileManager.default.removeItem(at: location) }
        let expected = try Data(contentsOf: server.root.appendingPathComponent("medium.bin"))
        #expect(try Data(contentsOf: location) == expected)
        #expect(response.expectedContentLength == Int64(expected.count))
        #expect(response.mimeType == "application/octet-stream")
    }

    @Test func largeFileStreamsWithProgress() async throws {
        let server = try await FTPTest.servers()
        let delegate = EventDelegate()
        let session = FTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.downloadTask(with: server.url("/big.bin"))
        task.resume()
        #expect(await delegate.waitForCompletion(of: task, timeout: 60))
        #expect(delegate.error(of: task) == nil)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: server.root.appendingPathComponent("big.bin").path)[.size] as? Int)
        let writes = delegate.events(for: task).compactMap { event -> Int64? in
            if case .wrote(_, _, let total, let expected) = event, expected == Int64(size) { return total }
            return nil
        }
        #expect(writes.count > 10, "progress arrives as the body streams")
        #expect(writes.last == Int64(size))
        #expect(task.countOfBytesReceived == Int64(size))
        #expect(task.countOfBytesExpectedToReceive == Int64(size))
    }

    @Test func bytesAPIReadsLines() async throws {
        let server = try await FTPTest.servers()
        let session = FTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let lines = try await withTimeout(20) {
            let (bytes, _) = try await session.bytes(from: server.url("/hello.txt"))
            var lines: [String] = []
            for try await line in bytes.lines { lines.append(line) }
            return lines
        }
        #expect(lines == ["Hello, Courier!"])
    }

    @Test func activeMode() async throws {
        let server = try await FTPTest.servers()
        let session = FTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url("/hello.txt"))
        request.ftpUsesActiveMode = true
        #expect(request.ftpUsesActiveMode)
        let result = try await session.loadData(request)
        #expect(result.error == nil)
        #expect(result.data == Data("Hello, Courier!\n".utf8))
    }

    @Test func serverAnswering125WithoutEPSVOrMLSD() async throws {
        let server = try await FTPTest.servers()
        let session = FTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let result = try await session.loadData(server.url("/hello.txt", server: .quirks))
        #expect(result.error == nil)
        #expect(result.data == Data("Hello, Courier!\n".utf8))
        let medium = try await session.loadData(server.url("/medium.bin", server: .quirks))
        #expect(medium.error == nil)
        #expect(medium.data == (try Data(contentsOf: server.root.appendingPathComponent("medium.bin"))))
    }

    @Test func dataConnectionDroppedMidTransfer() async throws {
        let server = try await FTPTest.servers()
        let delegate = EventDelegate()
        let session = FTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url("/medium.bin", server: .drop))
        task.resume()
        #expect(await delegate.waitForCompletion(of: task, timeout: 30))
        let error = try FTPTest.urlError(delegate.error(of: task))
        #expect(error.code == .networkConnectionLost)
        #expect(error.failingURL == server.url("/medium.bin", server: .drop))
        #expect(delegate.body(of: task).count < 4 << 20, "a truncated body is never reported as complete")
    }

    @Test func missingFileAndDirectory() async throws {
        let server = try await FTPTest.servers()
        let session = FTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        for path in ["/no-such-file.txt", "/no-such-dir/file.txt", "/no-such-dir/"] {
            let url = server.url(path)
            let result = try await session.loadData(url)
            let error = try FTPTest.urlError(result.error)
            #expect(error.code == .fileDoesNotExist, "\(path): \(error)")
            #expect(error.failingURL == url)
        }
    }

    @Test func refusedConnection() async throws {
        let session = FTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let port = try FTPTest.unusedPort()
        let result = try await session.loadData(try #require(URL(string: "ftp://127.0.0.1:\(port)/x.txt")))
        #expect(try FTPTest.urlError(result.error).code == .cannotConnectToHost)
    }

    @Test func silentServerTimesOut() async throws {
        // An HTTP server waits for a request, so to an FTP client it never sends its greeting.
        let silent = try FaultServer()
        defer { silent.stop() }
        let session = FTPTest.session { $0.timeoutIntervalForRequest = 1 }
        defer { session.finishTasksAndInvalidate() }
        let url = try #require(URL(string: "ftp://127.0.0.1:\(silent.port)/file.txt"))
        let started = Date()
        let result = try await session.loadData(url, timeout: 20)
        let error = try FTPTest.urlError(result.error)
        #expect(error.code == .timedOut)
        #expect(error.failingURL == url)
        #expect(Date().timeIntervalSince(started) < 10)
    }

    @Test func connectionsAreReusedAcrossTasks() async throws {
        let server = try await FTPTest.servers()
        let delegate = EventDelegate()
        let session = FTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        var tasks: [URLSessionTask] = []
        for _ in 0..<3 {
            let task = session.dataTask(with: server.url("/hello.txt"))
            tasks.append(task)
            task.resume()
            #expect(await delegate.waitForCompletion(of: task))
        }
        let reused = tasks.dropFirst().compactMap { delegate.metrics(of: $0)?.transactionMetrics.last?.isReusedConnection }
        #expect(reused == [true, true], "later tasks reuse the first task's control connection")
    }
}
