import Foundation
import Testing
@testable import Courier

/// Network failures become Apple's `URLError` codes, each with the failing URL.
@Suite("HTTP errors")
struct HTTPErrorTests {

    /// Loads `url` with a completion handler and returns its error (recording an issue without one).
    private func failure(of url: URL, configure: (URLSessionConfiguration) -> Void = { _ in },
                         request adjust: (inout URLRequest) -> Void = { _ in },
                         sourceLocation: SourceLocation = #_sourceLocation) async throws -> URLError {
        let session = HTTPTest.session(configure: configure)
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: url)
        adjust(&request)
        let result = try await session.loadData(request, timeout: 20)
        #expect(result.data == nil, "no data with an error", sourceLocation: sourceLocation)
        let error = try HTTPTest.urlError(result.error, sourceLocation: sourceLocation)
        #expect(HTTPTest.hasFailingURL(error, url), "failingURL is \(String(describing: error.failingURL))",
                sourceLocation: sourceLocation)
        return error
    }

    @Test(arguments: ["http:///x", "https:///x"])
    func urlWithoutAHostIsABadURL(_ string: String) async throws {
        let url = try #require(URL(string: string))
        let code = try await failure(of: url).code
        #expect(code == .badURL, "got \(code)")
    }

    @Test func refusedConnection() async throws {
        let url = URL(string: "http://127.0.0.1:\(try HTTPTest.refusedPort())/anything")!
        let code = try await failure(of: url).code
        #expect(code == .cannotConnectToHost, "got \(code)")
    }

    @Test func unresolvableHost() async throws {
        let url = URL(string: "http://\(HTTPTest.unresolvableHost)/anything")!
        let code = try await failure(of: url).code
        #expect(code == .cannotFindHost, "got \(code)")
    }

    @Test func truncatedBody() async throws {
        let server = try FaultServer(routes: ["/short": .truncated(body: Data(repeating: 7, count: 1000), declaredLength: 5000)])
        defer { server.stop() }
        let code = try await failure(of: server.url("/short")).code
        #expect(code == .networkConnectionLost, "got \(code)")
    }

    @Test func closedWithoutResponse() async throws {
        let server = try FaultServer(routes: ["/nothing": .raw(Data())])
        defer { server.stop() }
        let code = try await failure(of: server.url("/nothing")).code
        #expect(code == .networkConnectionLost, "got \(code)")
    }

    @Test(arguments: [
        "HTTP/1.1 2x0 OK\r\nContent-Length: 2\r\n\r\nhi",
        "HTTP/1.1 OK\r\nContent-Length: 2\r\n\r\nhi",
        "HTTP/1.1 99999 Huge\r\nContent-Length: 2\r\n\r\nhi",
        "NOT-HTTP garbage line\r\n\r\n",
    ])
    func malformedStatusLine(response: String) async throws {
        let server = try FaultServer(routes: ["/bad": .raw(Data(response.utf8))])
        defer { server.stop() }
        let code = try await failure(of: server.url("/bad")).code
        #expect(code == .badServerResponse, "got \(code)")
    }

    @Test(arguments: [
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nthis header line has no colon\r\n\r\nhi",
        "HTTP/1.1 200 OK\r\nContent-Length: banana\r\n\r\nhi",
    ])
    func malformedHeader(response: String) async throws {
        let server = try FaultServer(routes: ["/bad": .raw(Data(response.utf8))])
        defer { server.stop() }
        let code = try await failure(of: server.url("/bad")).code
        #expect(code == .badServerResponse, "got \(code)")
    }

    @Test func malformedChunkedFraming() async throws {
        let response = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\nhi\r\n0\r\n\r\n"
        let server = try FaultServer(routes: ["/bad": .raw(Data(response.utf8))])
        defer { server.stop() }
        // A response that cannot be parsed, not a lost connection.
        let code = try await failure(of: server.url("/bad")).code
        #expect(code == .cannotParseResponse, "got \(code)")
    }

    @Test func resetMidBody() async throws {
        let head = Data("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n".utf8) + Data(repeating: 1, count: 2000)
        let server = try FaultServer(routes: ["/reset": .reset(after: head)])
        defer { server.stop() }
        let code = try await failure(of: server.url("/reset")).code
        #expect(code == .networkConnectionLost, "got \(code)")
    }

    @Test func resetBeforeResponse() async throws {
        let server = try FaultServer(routes: ["/reset": .reset(after: Data())])
        defer { server.stop() }
        let code = try await failure(of: server.url("/reset")).code
        #expect(code == .networkConnectionLost, "got \(code)")
    }

    @Test func chunkedBodyWithTrailer() async throws {
        // libcurl hands trailer fields to the header callback after the body: they are no new
        // response, and the connection stays usable for the next request.
        let pieces = ["hello", ", trailing ", "world"].map { Data($0.utf8) }
        let server = try FaultServer(routes: ["/trailer": .custom { _, writer in
            writer.writeHead(status: 200, headers: [("Transfer-Encoding", "chunked"), ("Trailer", "X-Checksum"),
                                                    ("Content-Type", "text/plain")])
            for piece in pieces {
                writer.write(Data(String(piece.count, radix: 16).utf8) + Data("\r\n".utf8) + piece + Data("\r\n".utf8))
            }
            return writer.write(Data("0\r\nX-Checksum: abc\r\n\r\n".utf8))
        }])
        defer { server.stop() }
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        for _ in 0..<2 {
            let result = try await session.loadData(server.url("/trailer"), timeout: 20)
            #expect(result.error == nil, "\(String(describing: result.error))")
            #expect(result.data == pieces.reduce(Data(), +))
            let response = try HTTPTest.http(result.response)
            #expect(response.statusCode == 200)
            #expect(response.value(forHTTPHeaderField: "X-Checksum") == nil, "a trailer is not a response header")
        }
        #expect(server.requests(for: "/trailer").count == 2)
    }

    @Test func chunkedBodyWithTrailerToADelegate() async throws {
        let body = Data(repeating: 0x61, count: 300_000)
        let server = try FaultServer(routes: ["/trailer": .raw(
            Data("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\(String(body.count, radix: 16))\r\n".utf8) + body
                + Data("\r\n0\r\nX-Checksum: abc\r\nX-Other: def\r\n\r\n".utf8))])
        defer { server.stop() }
        let delegate = EventDelegate()
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url("/trailer"))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil, "\(String(describing: delegate.error(of: task)))")
        #expect(delegate.body(of: task).count == body.count)
        #expect(StreamHash.of(delegate.body(of: task)) == StreamHash.of(body))
        #expect(delegate.events(for: task).filter { $0.name == "response" }.count == 1)
    }

    /// Response heads libcurl refuses for their size: one 300 KiB field (longer than libcurl keeps
    /// for a header line; libcurl 7.88 answers "out of memory"), and 400 fields of 1 KB (more than
    /// the 300 KiB it accepts for a whole head).
    @Test(arguments: [
        "X-Huge: " + String(repeating: "h", count: 300 << 10) + "\r\n",
        (0..<400).map { "X-Field-\($0): " + String(repeating: "f", count: 1000) + "\r\n" }.joined(),
    ])
    func oversizedResponseHead(fields: String) async throws {
        let response = "HTTP/1.1 200 OK\r\n" + fields + "Content-Length: 2\r\n\r\nhi"
        let server = try FaultServer(routes: ["/huge": .raw(Data(response.utf8))])
        defer { server.stop() }
        let started = Date()
        let error = try await failure(of: server.url("/huge"))
        #expect(error.code == .badServerResponse, "got \(error.code): \(error.localizedDescription)")
        #expect(Date().timeIntervalSince(started) < 10)
    }

    /// The temporary files of download tasks (`CFNetworkDownload_*.tmp` in the temporary directory).
    static func downloadFiles() -> Set<String> {
        let directory = FileManager.default.temporaryDirectory.path
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return Set(names.filter { $0.hasPrefix("CFNetworkDownload_") && $0.hasSuffix(".tmp") }.map { "\(directory)/\($0)" })
    }

    /// A download that fails mid-body, from a server that gives no validator (so there is nothing to
    /// resume): the partial file is removed and the error carries no resume data.
    @Test(arguments: ["truncated", "reset"])
    func failedDownloadLeavesNoFile(fault: String) async throws {
        let head = Data("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 100000\r\n\r\n".utf8)
        let body = Data(repeating: 7, count: 2000)
        let route: FaultServer.Route = fault == "truncated"
            ? .truncated(body: body, declaredLength: 100_000)
            : .custom { _, writer in
                writer.write(head + body)
                writer.pause(0.3) // the client reads (and writes to its file) what was sent
                writer.resetOnClose()
                return false
            }
        let server = try FaultServer(routes: ["/file": route])
        defer { server.stop() }
        let before = Self.downloadFiles()
        // The task's own file: a new download file holding what was written when it reports writing.
        let taskFiles = Locked<Set<String>>([])
        let delegate = EventDelegate(EventDelegate.Hooks(wrote: { _, _, total, _ in
            let written = Self.downloadFiles().subtracting(before).filter { path in
                ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value == total
            }
            taskFiles.withLock { $0.formUnion(written) }
        }))
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/file")
        let task = session.downloadTask(with: url)
        try await HTTPTest.run(task, delegate)
        let error = try HTTPTest.urlError(delegate.error(of: task))
        #expect(error.code == .networkConnectionLost, "got \(error.code)")
        #expect(HTTPTest.hasFailingURL(error, url))
        #expect(error.downloadTaskResumeData == nil)
        #expect(delegate.download(of: task) == nil, "didFinishDownloadingTo after a failure")
        let files = taskFiles.current
        #expect(files.count == 1, "the task's temporary file while it downloaded: \(files)")
        for path in files { #expect(!FileManager.default.fileExists(atPath: path), "\(path) was left behind") }
        // No other new download file stays either (other suites' downloads come and go meanwhile).
        #expect(await waitUntil(timeout: 10) { Self.downloadFiles().subtracting(before).isEmpty },
                "left behind: \(Self.downloadFiles().subtracting(before))")
    }

    @Test func failedDownloadWithCompletionHandlerLeavesNoFile() async throws {
        let server = try FaultServer(routes: ["/file": .truncated(body: Data(repeating: 7, count: 3000), declaredLength: 50_000)])
        defer { server.stop() }
        let before = Self.downloadFiles()
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/file")
        let outcome = Locked<(URL?, (any Error)?)?>(nil)
        let task = session.downloadTask(with: url) { location, _, error in outcome.withLock { $0 = (location, error) } }
        task.resume()
        #expect(await waitUntil(timeout: 20) { outcome.current != nil })
        let (location, failure) = try #require(outcome.current)
        #expect(location == nil)
        let error = try HTTPTest.urlError(failure)
        #expect(error.code == .networkConnectionLost, "got \(error.code)")
        #expect(HTTPTest.hasFailingURL(error, url))
        #expect(error.downloadTaskResumeData == nil)
        #expect(await waitUntil(timeout: 10) { Self.downloadFiles().subtracting(before).isEmpty },
                "left behind: \(Self.downloadFiles().subtracting(before))")
    }

    @Test func failedResumableDownloadKeepsOnlyItsPartialFile() async throws {
        // With a validator the partial file is kept for the resume data, and it is the file the
        // resume data names; nothing else is left.
        let body = Data(repeating: 9, count: 4000)
        let head = "HTTP/1.1 200 OK\r\nContent-Length: 60000\r\nETag: \"v1\"\r\nAccept-Ranges: bytes\r\n\r\n"
        let server = try FaultServer(routes: ["/file": .raw(Data(head.utf8) + body)])
        defer { server.stop() }
        let before = Self.downloadFiles()
        let delegate = EventDelegate()
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.downloadTask(with: server.url("/file"))
        try await HTTPTest.run(task, delegate)
        let error = try HTTPTest.urlError(delegate.error(of: task))
        #expect(error.code == .networkConnectionLost, "got \(error.code)")
        let resumeData = try #require(error.downloadTaskResumeData)
        let resume = try DownloadResumeData.decode(resumeData)
        #expect(resume.bytesReceived == Int64(body.count))
        let partial = resume.partialFilePath
        defer { try? FileManager.default.removeItem(atPath: partial) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: partial)) == body)
        #expect(await waitUntil(timeout: 10) { Self.downloadFiles().subtracting(before).subtracting([partial]).isEmpty },
                "left behind: \(Self.downloadFiles().subtracting(before))")
    }

    @Test func stallTimesOutWithSessionRequestTimeout() async throws {
        let server = try FaultServer(routes: ["/stall": .stall(seconds: 15)])
        defer { server.stop() }
        let started = Date()
        let error = try await failure(of: server.url("/stall"), configure: { $0.timeoutIntervalForRequest = 1 })
        #expect(error.code == .timedOut)
        let elapsed = Date().timeIntervalSince(started)
        #expect(elapsed >= 0.9 && elapsed < 6, "timed out after \(elapsed) s")
    }

    @Test func stallTimesOutWithRequestTimeout() async throws {
        let server = try FaultServer(routes: ["/stall": .stall(seconds: 15)])
        defer { server.stop() }
        let started = Date()
        let error = try await failure(of: server.url("/stall"), request: { $0.timeoutInterval = 1 })
        #expect(error.code == .timedOut)
        #expect(Date().timeIntervalSince(started) < 6)
    }

    @Test func idleTimeoutResetsWithEachByte() async throws {
        // A byte every 50 ms keeps a 1 s idle timeout from firing, although the body takes longer.
        let body = Data((0..<30).map { UInt8($0) })
        let server = try FaultServer(routes: ["/drip": .drip(body: body, interval: 0.05)])
        defer { server.stop() }
        let session = HTTPTest.session { $0.timeoutIntervalForRequest = 1 }
        defer { session.finishTasksAndInvalidate() }
        let result = try await session.loadData(server.url("/drip"), timeout: 20)
        #expect(result.error == nil)
        #expect(result.data == body)
    }

    @Test func resourceTimeoutEndsASlowBody() async throws {
        let server = try FaultServer(routes: ["/drip": .drip(body: Data(repeating: 1, count: 200), interval: 0.05)])
        defer { server.stop() }
        let started = Date()
        let error = try await failure(of: server.url("/drip"), configure: { $0.timeoutIntervalForResource = 1.5 })
        #expect(error.code == .timedOut)
        #expect(Date().timeIntervalSince(started) < 6)
    }

    @Test func errorsReachTheDelegateToo() async throws {
        let server = try FaultServer(routes: ["/short": .truncated(body: Data(repeating: 7, count: 100), declaredLength: 500)])
        defer { server.stop() }
        let delegate = EventDelegate()
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/short")
        let task = session.dataTask(with: url)
        try await HTTPTest.run(task, delegate)
        let error = try HTTPTest.urlError(delegate.error(of: task))
        #expect(error.code == .networkConnectionLost)
        #expect(HTTPTest.hasFailingURL(error, url))
        #expect(delegate.completionCount(of: task) == 1)
        #expect((task.error as? URLError)?.code == .networkConnectionLost)
        #expect(task.state == .completed)
    }
}
