import Foundation
import Testing
@testable import Courier

/// Request bodies: from memory, from a file, from the delegate's stream; POST and PUT; progress
/// reports; and the server receiving exactly the bytes sent.
@Suite("HTTP uploads")
struct HTTPUploadTests {

    /// The `didSendBodyData` totals of `task`, in order.
    static func sentTotals(_ delegate: EventDelegate, _ task: URLSessionTask) -> [(total: Int64, expected: Int64)] {
        delegate.events(for: task).compactMap { event in
            if case .sentBody(_, let total, let expected) = event { return (total, expected) }
            return nil
        }
    }

    /// The `count hash` a sink answered.
    static func sinkAnswer(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

    static func expectedSinkAnswer(_ body: Data) -> String { "\(body.count) \(String(StreamHash.of(body), radix: 16))" }

    @Test func postFromData() async throws {
        let server = try FaultServer(routes: ["/sink": .sink])
        defer { server.stop() }
        let delegate = EventDelegate()
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let body = try HTTPTest.randomBytes(1_500_000)
        var request = URLRequest(url: server.url("/sink"))
        request.httpMethod = "POST"
        let task = session.uploadTask(with: request, from: body)
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(Self.sinkAnswer(delegate.body(of: task)) == Self.expectedSinkAnswer(body))
        let totals = Self.sentTotals(delegate, task)
        #expect(!totals.isEmpty)
        #expect(totals.last?.total == Int64(body.count))
        #expect(totals.allSatisfy { $0.expected == Int64(body.count) })
        #expect(zip(totals, totals.dropFirst()).allSatisfy { $0.total < $1.total })
        #expect(task.countOfBytesSent == Int64(body.count))
        let received = try #require(server.requests(for: "/sink").first)
        #expect(received.method == "POST")
        #expect(received.header("Content-Length") == "\(body.count)")
        #expect(received.header("Expect") == nil)
    }

    /// Runs an upload task with a completion handler and waits (bounded) for its result.
    private static func upload(_ request: URLRequest, _ body: UploadBody, in session: URLSession) async throws -> DataResult {
        let shot = OneShot<DataResult>()
        let handler: @Sendable (Data?, URLResponse?, (any Error)?) -> Void = { data, response, error in
            shot.fulfil(DataResult(data: data, response: response, error: error, queue: OperationQueue.current))
        }
        let task: URLSessionUploadTask
        switch body {
        case .file(let file): task = session.uploadTask(with: request, fromFile: file, completionHandler: handler)
        case .data(let data): task = session.uploadTask(with: request, from: data, completionHandler: handler)
        default: task = session.uploadTask(with: request, from: Data(), completionHandler: handler)
        }
        task.resume()
        return try await shot.wait(timeout: 20, "the upload to \(request.url?.absoluteString ?? "?")")
    }

    /// A sink at `/sink` that answers the first request and keeps the connection, then closes it
    /// without a word once the second request (body and all) has arrived on it; later requests
    /// are answered again.
    private static func serverDroppingTheSecondRequest() throws -> FaultServer {
        let calls = Locked(0)
        return try FaultServer(routes: ["/sink": .custom { request, writer in
            let call: Int = calls.withLock { $0 += 1; return $0 }
            guard call != 2 else { return false }
            let answer = "\(request.bodyLength) \(String(request.bodyHash, radix: 16))"
            return writer.send(.ok(Data(answer.utf8), headers: [("Content-Type", "text/plain")]), method: request.method)
        }])
    }

    /// A server that drops a kept-alive connection once the next request on it has arrived, body
    /// and all, without answering (as a server closing an idle connection at that moment does).
    /// libcurl then sends the request again on a new connection, which needs the body from its
    /// start: Courier's seek callback rewinds a body in memory or in a file.
    @Test(arguments: ["httpBody", "uploadData", "uploadFile"])
    func bodyIsSentAgainWhenAKeptAliveConnectionDrops(source: String) async throws {
        let server = try Self.serverDroppingTheSecondRequest()
        defer { server.stop() }
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url("/sink"))
        request.httpMethod = "POST"
        let warmUp = try HTTPTest.randomBytes(1000)
        let first = try await Self.upload(request, .data(warmUp), in: session)
        #expect(first.error == nil)
        #expect(first.data.map(Self.sinkAnswer) == Self.expectedSinkAnswer(warmUp))

        let body = try HTTPTest.randomBytes(300_000)
        let directory = try HTTPTest.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("body.bin")
        try body.write(to: file)
        let result: DataResult
        switch source {
        case "httpBody":
            var withBody = request
            withBody.httpBody = body
            result = try await session.loadData(withBody, timeout: 20)
        case "uploadData":
            result = try await Self.upload(request, .data(body), in: session)
        default:
            result = try await Self.upload(request, .file(file), in: session)
        }
        #expect(result.error == nil, "\(String(describing: result.error))")
        #expect(result.data.map(Self.sinkAnswer) == Self.expectedSinkAnswer(body))
        let received = server.requests(for: "/sink")
        #expect(received.count == 3, "the dropped request and its retry: \(received.count) requests")
        #expect(received.dropFirst().allSatisfy { $0.bodyLength == body.count && $0.bodyHash == StreamHash.of(body) })
        #expect(server.acceptedConnections == 2, "the first request's connection was reused, then a new one opened")
    }

    /// The same with the app's stream, which cannot go back: the delegate is asked for a new one.
    @Test func streamIsAskedForAgainWhenAKeptAliveConnectionDrops() async throws {
        let server = try Self.serverDroppingTheSecondRequest()
        defer { server.stop() }
        let body = try HTTPTest.randomBytes(300_000)
        let delegate = EventDelegate(EventDelegate.Hooks(bodyStream: { _ in InputStream(data: body) }))
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url("/sink"))
        request.httpMethod = "POST"
        let warmUp = try await Self.upload(request, .data(Data("warm".utf8)), in: session)
        #expect(warmUp.error == nil)

        request.setValue("\(body.count)", forHTTPHeaderField: "Content-Length")
        let task = session.uploadTask(withStreamedRequest: request)
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil, "\(String(describing: delegate.error(of: task)))")
        #expect(Self.sinkAnswer(delegate.body(of: task)) == Self.expectedSinkAnswer(body))
        let asked = delegate.events(for: task).filter { $0.name == "needStream" }.count
        #expect(asked == 2, "needNewBodyStream: once to start, once to send the body again; got \(asked)")
        let received = server.requests(for: "/sink")
        #expect(received.count == 3)
        #expect(received.dropFirst().allSatisfy { $0.bodyLength == body.count && $0.bodyHash == StreamHash.of(body) })
    }

    @Test func putWithHTTPBody() async throws {
        let server = try FaultServer(fallback: .echo)
        defer { server.stop() }
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url("/resource/42"))
        request.httpMethod = "PUT"
        request.httpBody = Data(#"{"value":42}"#.utf8)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let result = try await session.loadData(request)
        #expect(result.error == nil)
        let echo = try HTTPTest.echoed(result.data)
        #expect(echo.method == "PUT")
        #expect(echo.body == Data(#"{"value":42}"#.utf8))
        #expect(echo.header("content-type") == "application/json")
        #expect(echo.header("content-length") == "12")
    }

    @Test(arguments: ["POST", "PUT", "PATCH", "DELETE"])
    func methodsWithAndWithoutBody(method: String) async throws {
        let server = try FaultServer(fallback: .echo)
        defer { server.stop() }
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url("/item"))
        request.httpMethod = method
        let empty = try HTTPTest.echoed(try await session.loadData(request).data)
        #expect(empty.method == method)
        #expect(empty.bodyLength == 0)
        request.httpBody = Data("x=1".utf8)
        let filled = try HTTPTest.echoed(try await session.loadData(request).data)
        #expect(filled.method == method)
        #expect(filled.body == Data("x=1".utf8))
    }

    @Test func postThroughNginx() async throws {
        let server = try await HTTPTest.nginx()
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url("/echo"))
        request.httpMethod = "POST"
        let body = try HTTPTest.randomBytes(200_000)
        let post = request
        let echoedBefore = server.echo.requests(for: "/echo").count
        // Waited for by polling (bounded), not with `withTimeout`: after a timeout the task must still
        // be there to be looked at, before it is cancelled.
        let outcome = Locked<Result<(Data, URLResponse), any Error>?>(nil)
        let upload = Task {
            let result: Result<(Data, URLResponse), any Error>
            do { result = .success(try await session.upload(for: post, from: body)) } catch { result = .failure(error) }
            outcome.withLock { $0 = result }
        }
        let deadline = Date().addingTimeInterval(20)
        while outcome.current == nil, Date() < deadline { try await Task.sleep(nanoseconds: 5_000_000) }
        guard let result = outcome.current else {
            // Seen twice under TSan in CI (20 s against the usual 0.02–0.04 s), both times with no
            // whole request at the upstream (it counts one once its whole body arrived) and no error
            // in nginx's log: what the task sent says whether the body left Courier.
            let received = server.echo.requests(for: "/echo").count - echoedBefore
            let log = { (name: String) in (try? String(contentsOf: server.prefix.appendingPathComponent("logs/\(name)"), encoding: .utf8)) ?? "" }
            let tasks = await session.allTasks.map {
                "state \($0.state.rawValue), sent \($0.countOfBytesSent) of \($0.countOfBytesExpectedToSend), "
                    + "received \($0.countOfBytesReceived), status \(($0.response as? HTTPURLResponse)?.statusCode ?? 0)"
            }
            upload.cancel()
            let what: String = "no answer within 20 s; the echo upstream received \(received) whole request(s) meanwhile "
                         + "(\(server.echo.acceptedConnections) connections accepted in all); the task: \(tasks); "
                         + "nginx's error log ends: \(String(log("error.log").suffix(1500))); its access log ends: \(String(log("access.log").suffix(600)))"
            Issue.record("\(what)")
            return
        }
        let (data, response) = try result.get()
        #expect(try HTTPTest.http(response).statusCode == 200)
        let echo = try HTTPTest.echoed(data)
        #expect(echo.method == "POST")
        #expect(echo.body == body)
    }

    @Test func streamedUploadAsksForTheStream() async throws {
        let server = try FaultServer(routes: ["/sink": .sink])
        defer { server.stop() }
        let body = try HTTPTest.randomBytes(700_000)
        let delegate = EventDelegate(EventDelegate.Hooks(bodyStream: { _ in InputStream(data: body) }))
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url("/sink"))
        request.httpMethod = "POST"
        let task = session.uploadTask(withStreamedRequest: request)
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.collapsedNames(for: task).first == "needStream")
        #expect(Self.sinkAnswer(delegate.body(of: task)) == Self.expectedSinkAnswer(body))
        let totals = Self.sentTotals(delegate, task)
        #expect(totals.last?.total == Int64(body.count))
        #expect(totals.allSatisfy { $0.expected == NSURLSessionTransferSizeUnknown })
        // No length known up front: HTTP/1.1 chunked encoding.
        #expect(server.requests(for: "/sink").first?.header("Transfer-Encoding")?.lowercased() == "chunked")
    }

    @Test func streamedUploadWithContentLength() async throws {
        let server = try FaultServer(routes: ["/sink": .sink])
        defer { server.stop() }
        let body = try HTTPTest.randomBytes(300_000)
        let delegate = EventDelegate(EventDelegate.Hooks(bodyStream: { _ in InputStream(data: body) }))
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url("/sink"))
        request.httpMethod = "POST"
        request.setValue("\(body.count)", forHTTPHeaderField: "Content-Length")
        let task = session.uploadTask(withStreamedRequest: request)
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(Self.sinkAnswer(delegate.body(of: task)) == Self.expectedSinkAnswer(body))
        #expect(server.requests(for: "/sink").first?.header("Content-Length") == "\(body.count)")
        #expect(Self.sentTotals(delegate, task).last?.total == Int64(body.count))
    }

    /// Apple asks `needNewBodyStream` again when a 307/308 must re-send a streamed body.
    @Test
    func streamedUploadRedirectedWith307AsksForANewStream() async throws {
        let server = try FaultServer(routes: [
            "/first": .respond(.ok(Data(), status: 307, reason: "Temporary Redirect", headers: [("Location", "/sink")])),
            "/sink": .sink,
        ])
        defer { server.stop() }
        let body = try HTTPTest.randomBytes(100_000)
        let delegate = EventDelegate(EventDelegate.Hooks(bodyStream: { _ in InputStream(data: body) }))
        // Bounded, should the upload stall.
        let session = HTTPTest.session(delegate: delegate) { $0.timeoutIntervalForResource = 3 }
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url("/first"))
        request.httpMethod = "POST"
        request.setValue("\(body.count)", forHTTPHeaderField: "Content-Length")
        let task = session.uploadTask(withStreamedRequest: request)
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.events(for: task).filter { $0.name == "needStream" }.count == 2)
        #expect(Self.sinkAnswer(delegate.body(of: task)) == Self.expectedSinkAnswer(body))
    }

    @Test func uploadWithCompletionHandlerFromFile() async throws {
        let server = try FaultServer(routes: ["/sink": .sink])
        defer { server.stop() }
        let directory = try HTTPTest.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let body = try HTTPTest.randomBytes(2_000_000)
        let file = directory.appendingPathComponent("body.bin")
        try body.write(to: file)
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url("/sink"))
        request.httpMethod = "POST"
        let shot = OneShot<DataResult>()
        session.uploadTask(with: request, fromFile: file) { data, response, error in
            shot.fulfil(DataResult(data: data, response: response, error: error))
        }.resume()
        let result = try await shot.wait(timeout: 20)
        #expect(result.error == nil)
        #expect(Self.sinkAnswer(result.data ?? Data()) == Self.expectedSinkAnswer(body))
        #expect(server.requests(for: "/sink").first?.header("Content-Length") == "\(body.count)")
    }

    @Test func missingUploadFileFails() async throws {
        let server = try FaultServer(routes: ["/sink": .sink])
        defer { server.stop() }
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url("/sink"))
        request.httpMethod = "POST"
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("courier-no-such-\(UUID().uuidString).bin")
        let shot = OneShot<DataResult>()
        session.uploadTask(with: request, fromFile: missing) { data, response, error in
            shot.fulfil(DataResult(data: data, response: response, error: error))
        }.resume()
        let result = try await shot.wait(timeout: 20)
        #expect(result.error != nil)
        #expect(server.requests(for: "/sink").isEmpty)
    }
}

extension HTTPHeavyTests {
    /// A 64 MiB file upload: streamed from disk, counted and hashed by the server.
    @Suite("HTTP large uploads")
    struct LargeUploads {
        @Test func post64MiBFromFile() async throws {
            let server = try FaultServer(routes: ["/sink": .sink])
            defer { server.stop() }
            let directory = try HTTPTest.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let size = 64 << 20
            let file = directory.appendingPathComponent("large.bin")
            try HTTPTest.randomBytes(size).write(to: file)
            let (count, hash) = try HTTPTest.hashOfFile(file)
            #expect(count == size)

            let delegate = EventDelegate()
            let session = HTTPTest.session(delegate: delegate)
            defer { session.finishTasksAndInvalidate() }
            var request = URLRequest(url: server.url("/sink"))
            request.httpMethod = "POST"
            let task = session.uploadTask(with: request, fromFile: file)
            try await HTTPTest.run(task, delegate, timeout: 60)
            #expect(delegate.error(of: task) == nil)
            #expect(HTTPUploadTests.sinkAnswer(delegate.body(of: task)) == "\(size) \(String(hash, radix: 16))")
            let totals = HTTPUploadTests.sentTotals(delegate, task)
            #expect(totals.count > 10, "progress is reported as the body goes out")
            #expect(totals.last?.total == Int64(size))
            #expect(totals.allSatisfy { $0.expected == Int64(size) })
            #expect(server.requests(for: "/sink").first?.header("Content-Length") == "\(size)")
        }
    }
}
