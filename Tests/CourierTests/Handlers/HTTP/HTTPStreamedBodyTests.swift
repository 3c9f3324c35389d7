import Foundation
import Testing
@testable import Courier

/// Streamed request bodies that the app produces over time (`Stream.getBoundStreams`): the upload
/// waits for the app's bytes without holding up the session's other transfers, and the server gets
/// every byte in order.
@Suite("HTTP streamed bodies from a slow producer")
struct HTTPStreamedBodyTests {
    /// Writes `pieces` into a pipe from a thread of its own, `pause` seconds apart, then closes it.
    /// ``input`` reads the pipe: a read blocks until the producer has written, as the read end of
    /// an app's bound stream pair does. `written` counts the pieces written so far.
    final class SlowProducer: @unchecked Sendable {
        let input: InputStream
        private let pipe = Pipe()
        let written = Locked(0)

        init() throws {
            // A write into a pipe whose reader has gone (a failed upload closes its stream) must
            // fail with EPIPE, not end the test process with SIGPIPE.
            signal(SIGPIPE, SIG_IGN)
            let path = "/proc/self/fd/\(pipe.fileHandleForReading.fileDescriptor)"
            input = try #require(InputStream(fileAtPath: path))
        }

        func start(_ pieces: [Data], pause: TimeInterval) {
            let writer = pipe.fileHandleForWriting
            let written = self.written
            let thread = Thread {
                defer { try? writer.close() }
                for piece in pieces {
                    Thread.sleep(forTimeInterval: pause)
                    guard (try? writer.write(contentsOf: piece)) != nil else { return }
                    written.withLock { $0 += 1 }
                }
            }
            thread.start()
        }
    }

    private func pieces() throws -> [Data] {
        try (0..<3).map { _ in try HTTPTest.randomBytes(200_000) }
    }

    /// Uploads from a slow producer to `url` while, on the same session, small GETs of `probe` run
    /// and finish before the producer is done.
    private func upload(to url: URL, probe: URL, delegate: EventDelegate, declareLength: Bool) async throws -> (URLSessionTask, Data) {
        let pieces = try pieces()
        let body = pieces.reduce(Data(), +)
        let producer = try SlowProducer()
        let session = HTTPTest.session(delegate: delegate) { $0.timeoutIntervalForRequest = 10 }
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.httpBodyStream = producer.input
        if declareLength { request.setValue("\(body.count)", forHTTPHeaderField: "Content-Length") }
        let upload = session.dataTask(with: request)
        upload.resume()
        producer.start(pieces, pause: 1.2)

        // While the upload waits for the producer, other tasks of the session still load.
        for _ in 0..<3 {
            let get = session.dataTask(with: probe)
            try await HTTPTest.run(get, delegate, timeout: 5)
            #expect(delegate.error(of: get) == nil)
            #expect((delegate.response(of: get) as? HTTPURLResponse)?.statusCode == 200)
        }
        // The producer writes its first piece 1.2 s after the upload started; a loop thread blocked
        // in the stream's read would have held every probe until then.
        #expect(producer.written.withLock { $0 } == 0, "the probes waited for the producer")
        guard await delegate.waitForCompletion(of: upload, timeout: 20) else {
            upload.cancel()
            throw TestTimeout(what: "the streamed upload to \(url)")
        }
        return (upload, body)
    }

    @Test(arguments: [false, true])
    func http11UploadWaitsForTheProducer(declareLength: Bool) async throws {
        let server = try FaultServer(routes: ["/sink": .sink, "/probe": .respond(.ok(Data("ok\n".utf8)))])
        defer { server.stop() }
        let delegate = EventDelegate()
        let (task, body) = try await upload(to: server.url("/sink"), probe: server.url("/probe"), delegate: delegate,
                                            declareLength: declareLength)
        #expect(delegate.error(of: task) == nil)
        #expect(HTTPUploadTests.sinkAnswer(delegate.body(of: task)) == HTTPUploadTests.expectedSinkAnswer(body))
        let sent = HTTPUploadTests.sentTotals(delegate, task)
        #expect(sent.last?.total == Int64(body.count))
    }

    @Test func http2UploadWaitsForTheProducer() async throws {
        let server = try await HTTPTest.nginx()
        let delegate = try HTTPTest.trustingDelegate(server)
        let (task, body) = try await upload(to: server.httpsURL("/echo"), probe: server.httpsURL(NginxServer.Files.hello),
                                            delegate: delegate, declareLength: true)
        #expect(delegate.error(of: task) == nil)
        let echo = try HTTPTest.echoed(delegate.body(of: task))
        #expect(echo.body == body)
    }

    @Test("a stream that fails mid-body ends the task with an error, and the session goes on")
    func failingStream() async throws {
        let server = try FaultServer(routes: ["/sink": .sink, "/probe": .respond(.ok(Data("ok\n".utf8)))])
        defer { server.stop() }
        let delegate = EventDelegate()
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("courier-missing-\(UUID().uuidString)")
        var request = URLRequest(url: server.url("/sink"))
        request.httpMethod = "POST"
        // A stream on a file that does not exist fails on its first read.
        request.httpBodyStream = InputStream(url: missing) ?? InputStream(data: Data())
        let task = session.dataTask(with: request)
        try await HTTPTest.run(task, delegate, timeout: 10)
        #expect(delegate.error(of: task) != nil)
        let probe = session.dataTask(with: server.url("/probe"))
        try await HTTPTest.run(probe, delegate, timeout: 5)
        #expect(delegate.error(of: probe) == nil)
    }
}
