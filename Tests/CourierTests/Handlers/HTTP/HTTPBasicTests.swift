import Foundation
import Testing
@testable import Courier

/// Plain `http:` GETs against nginx through every kind of task and the async API: status codes,
/// headers, and what the response says about its body.
@Suite("HTTP basics")
struct HTTPBasicTests {

    @Test func completionHandlerDataTask() async throws {
        let server = try await HTTPTest.nginx()
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let url = server.url(NginxServer.Files.hello)
        let result = try await session.loadData(url)
        #expect(result.error == nil)
        #expect(result.data == NginxServer.Files.helloContents)
        let response = try HTTPTest.http(result.response)
        #expect(response.statusCode == 200)
        #expect(response.url == url)
        #expect(response.mimeType == "text/plain")
        #expect(response.textEncodingName == "utf-8")
        #expect(response.expectedContentLength == Int64(NginxServer.Files.helloContents.count))
        #expect(response.suggestedFilename == "hello.txt")
        // Header names are case-insensitive.
        #expect(response.value(forHTTPHeaderField: "content-type") == "text/plain; charset=utf-8")
        #expect(response.value(forHTTPHeaderField: "CONTENT-LENGTH") == "\(NginxServer.Files.helloContents.count)")
        #expect(response.value(forHTTPHeaderField: "Server")?.hasPrefix("nginx") == true)
        #expect(response.allHeaderFields["Content-Type"] as? String == "text/plain; charset=utf-8")
        #expect(response.value(forHTTPHeaderField: "ETag") != nil)
        #expect(response.value(forHTTPHeaderField: "Last-Modified") != nil)
    }

    @Test func delegateDataTaskDeliversResponseThenData() async throws {
        let server = try await HTTPTest.nginx()
        let delegate = EventDelegate()
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url(NginxServer.Files.medium))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.collapsedNames(for: task) == ["response", "data", "metrics", "complete"])
        #expect(delegate.body(of: task) == (try server.contents(of: NginxServer.Files.medium)))
        let response = try HTTPTest.http(delegate.response(of: task))
        #expect(response.statusCode == 200)
        #expect(response.mimeType == "application/octet-stream")
        #expect(response.expectedContentLength == Int64(NginxServer.Files.mediumSize))
        #expect(task.countOfBytesReceived == Int64(NginxServer.Files.mediumSize))
        #expect(task.countOfBytesExpectedToReceive == Int64(NginxServer.Files.mediumSize))
        #expect(task.state == .completed)
        #expect(delegate.eventsAfterCompletion.isEmpty)
    }

    @Test func downloadTaskWithCompletionHandler() async throws {
        let server = try await HTTPTest.nginx()
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let shot = OneShot<DownloadResult>()
        let task = session.downloadTask(with: server.url(NginxServer.Files.medium)) { location, response, error in
            let content = location.flatMap { try? Data(contentsOf: $0) }
            shot.fulfil(DownloadResult(location: location, response: response, error: error, contentDuringHandler: content))
        }
        task.resume()
        let result = try await shot.wait(timeout: 20)
        #expect(result.error == nil)
        #expect(result.contentDuringHandler == (try server.contents(of: NginxServer.Files.medium)))
        #expect(try HTTPTest.http(result.response).statusCode == 200)
        if let location = result.location {
            #expect(!FileManager.default.fileExists(atPath: location.path), "the file is removed after the handler returns")
        }
    }

    @Test func downloadTaskWithDelegate() async throws {
        let server = try await HTTPTest.nginx()
        let delegate = EventDelegate()
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.downloadTask(with: server.url(NginxServer.Files.medium))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.download(of: task)?.content == (try server.contents(of: NginxServer.Files.medium)))
        let writes = delegate.events(for: task).compactMap { event -> (Int64, Int64, Int64)? in
            if case .wrote(_, let bytes, let total, let expected) = event { return (bytes, total, expected) }
            return nil
        }
        #expect(!writes.isEmpty)
        #expect(writes.last?.1 == Int64(NginxServer.Files.mediumSize))
        #expect(writes.allSatisfy { $0.2 == Int64(NginxServer.Files.mediumSize) })
        #expect(writes.map(\.0).reduce(0, +) == Int64(NginxServer.Files.mediumSize))
        #expect(delegate.collapsedNames(for: task) == ["wrote", "finishedDownload", "metrics", "complete"])
    }

    @Test func asyncData() async throws {
        let server = try await HTTPTest.nginx()
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let (data, response) = try await withTimeout(20) { try await session.data(from: server.url(NginxServer.Files.json)) }
        #expect(data == NginxServer.Files.jsonContents)
        #expect(response.mimeType == "application/json")
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["name"] as? String == "Courier")
    }

    @Test func asyncDownload() async throws {
        let server = try await HTTPTest.nginx()
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let (location, response) = try await withTimeout(20) { try await session.download(from: server.url(NginxServer.Files.medium)) }
        defer { try? FileManager.default.removeItem(at: location) }
        #expect(try HTTPTest.http(response).statusCode == 200)
        #expect(try Data(contentsOf: location) == (try server.contents(of: NginxServer.Files.medium)))
    }

    @Test func asyncBytesLines() async throws {
        let server = try await HTTPTest.nginx()
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let lines: [String] = try await withTimeout(20) {
            let (bytes, response) = try await session.bytes(from: server.url(NginxServer.Files.lines))
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            var lines: [String] = []
            for try await line in bytes.lines { lines.append(line) }
            return lines
        }
        #expect(lines.count == NginxServer.Files.lineCount)
        #expect(lines.first == "line 1")
        #expect(lines.last == "line \(NginxServer.Files.lineCount)")
    }

    @Test(arguments: [(204, ""), (404, "not here\n"), (500, "broken\n"), (418, "teapot\n")])
    func statusCodesAreResponsesNotErrors(status: Int, body: String) async throws {
        let server = try await HTTPTest.nginx()
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let result = try await session.loadData(server.url("/status/\(status)"))
        #expect(result.error == nil)
        #expect(try HTTPTest.http(result.response).statusCode == status)
        #expect(result.data == Data(body.utf8))
    }

    @Test func headRequestHasLengthButNoBody() async throws {
        let server = try await HTTPTest.nginx()
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url(NginxServer.Files.medium))
        request.httpMethod = "HEAD"
        let result = try await session.loadData(request)
        #expect(result.error == nil)
        #expect(result.data == Data())
        let response = try HTTPTest.http(result.response)
        #expect(response.statusCode == 200)
        #expect(response.expectedContentLength == Int64(NginxServer.Files.mediumSize))
    }

    @Test func requestHeadersReachTheServer() async throws {
        let server = try await HTTPTest.nginx()
        let session = HTTPTest.session { configuration in
            configuration.httpAdditionalHeaders = ["X-Session-Header": "from-config", "X-Overridden": "config"]
        }
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url("/echo?q=1"))
        request.setValue("from-request", forHTTPHeaderField: "X-Request-Header")
        request.setValue("request", forHTTPHeaderField: "X-Overridden")
        let result = try await session.loadData(request)
        #expect(result.error == nil)
        let echo = try HTTPTest.echoed(result.data)
        #expect(echo.method == "GET")
        #expect(echo.target == "/echo?q=1")
        #expect(echo.header("x-request-header") == "from-request")
        #expect(echo.header("x-session-header") == "from-config")
        #expect(echo.header("x-overridden") == "request")
        #expect(echo.header("user-agent")?.isEmpty == false)
        #expect(echo.header("accept-encoding")?.contains("gzip") == true)
        #expect(echo.header("host") == "127.0.0.1:\(server.httpPort)")
    }

    @Test func chunkedResponseHasUnknownLength() async throws {
        let server = try FaultServer(routes: [
            "/chunked": .chunked(pieces: [Data("first ".utf8), Data("second ".utf8), Data("third".utf8)], delay: 0,
                                 headers: [("Content-Type", "text/plain")]),
        ])
        defer { server.stop() }
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let result = try await session.loadData(server.url("/chunked"))
        #expect(result.error == nil)
        #expect(result.data == Data("first second third".utf8))
        #expect(result.response?.expectedContentLength == -1)
        #expect(result.response?.mimeType == "text/plain")
    }

    @Test func manyConcurrentTasksOnOneSession() async throws {
        let server = try await HTTPTest.nginx()
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let results = try await withThrowingTaskGroup(of: Data.self) { group in
            for index in 0..<24 {
                let path = index.isMultiple(of: 2) ? NginxServer.Files.hello : NginxServer.Files.json
                group.addTask { try await withTimeout(20) { try await session.data(from: server.url(path)).0 } }
            }
            return try await group.reduce(into: [Data]()) { $0.append($1) }
        }
        #expect(results.count == 24)
        #expect(results.filter { $0 == NginxServer.Files.helloContents }.count == 12)
        #expect(results.filter { $0 == NginxServer.Files.jsonContents }.count == 12)
    }
}
