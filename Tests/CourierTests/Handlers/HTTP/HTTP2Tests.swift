import Foundation
import Testing
@testable import Courier

/// HTTPS with HTTP/2 (negotiated by ALPN) against nginx, and connection reuse. nginx's certificate
/// is self-signed: every task here trusts it by answering the server-trust challenge with
/// `URLCredential(trust:)` (``HTTPTest/trustingDelegate(_:_:)``).
@Suite("HTTP/2 and connection reuse")
struct HTTP2Tests {

    /// The transaction metrics of `task`'s last exchange.
    private func lastTransaction(_ delegate: EventDelegate, _ task: URLSessionTask,
                                 sourceLocation: SourceLocation = #_sourceLocation) throws -> URLSessionTaskTransactionMetrics {
        let metrics = try #require(delegate.metrics(of: task), "no metrics for task \(task.taskIdentifier)", sourceLocation: sourceLocation)
        return try #require(metrics.transactionMetrics.last, "no transaction metrics", sourceLocation: sourceLocation)
    }

    @Test func httpsUsesHTTP2() async throws {
        let server = try await HTTPTest.nginx()
        let delegate = try HTTPTest.trustingDelegate(server)
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let url = server.httpsURL(NginxServer.Files.hello)
        let task = session.dataTask(with: url)
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == NginxServer.Files.helloContents)
        let response = try HTTPTest.http(delegate.response(of: task))
        #expect(response.statusCode == 200)
        #expect(response.url == url)
        // HTTP/2 header names arrive in lower case; lookups stay case-insensitive.
        #expect(response.value(forHTTPHeaderField: "Content-Type") == "text/plain; charset=utf-8")
        #expect(response.mimeType == "text/plain")
        #expect(try lastTransaction(delegate, task).networkProtocolName == "h2")
    }

    @Test func plainHTTPUsesHTTP11() async throws {
        let server = try await HTTPTest.nginx()
        let delegate = EventDelegate()
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url(NginxServer.Files.hello))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(try lastTransaction(delegate, task).networkProtocolName == "http/1.1")
    }

    @Test func http2UploadAndDownload() async throws {
        let server = try await HTTPTest.nginx()
        let delegate = try HTTPTest.trustingDelegate(server)
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }

        let body = try HTTPTest.randomBytes(300_000)
        var request = URLRequest(url: server.httpsURL("/echo"))
        request.httpMethod = "POST"
        let upload = session.uploadTask(with: request, from: body)
        try await HTTPTest.run(upload, delegate)
        #expect(delegate.error(of: upload) == nil)
        let echo = try HTTPTest.echoed(delegate.body(of: upload))
        #expect(echo.method == "POST")
        #expect(echo.body == body)
        #expect(try lastTransaction(delegate, upload).networkProtocolName == "h2")

        let download = session.downloadTask(with: server.httpsURL(NginxServer.Files.medium))
        try await HTTPTest.run(download, delegate)
        #expect(delegate.error(of: download) == nil)
        #expect(delegate.download(of: download)?.content == (try server.contents(of: NginxServer.Files.medium)))
        #expect(try lastTransaction(delegate, download).networkProtocolName == "h2")
    }

    @Test func concurrentHTTP2TasksShareTheConnection() async throws {
        let server = try await HTTPTest.nginx()
        let delegate = try HTTPTest.trustingDelegate(server)
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let first = session.dataTask(with: server.httpsURL(NginxServer.Files.hello))
        try await HTTPTest.run(first, delegate)
        #expect(delegate.error(of: first) == nil)
        #expect(try lastTransaction(delegate, first).isReusedConnection == false)

        let tasks = (0..<6).map { index in
            session.dataTask(with: server.httpsURL(index.isMultiple(of: 2) ? NginxServer.Files.json : NginxServer.Files.hello))
        }
        for task in tasks { task.resume() }
        for task in tasks { #expect(await delegate.waitForCompletion(of: task, timeout: 20)) }
        for task in tasks {
            #expect(delegate.error(of: task) == nil)
            #expect(try lastTransaction(delegate, task).networkProtocolName == "h2")
        }
        // One TLS connection: no later task needs a new handshake or a new server-trust challenge.
        let trustChallenges = delegate.events.filter {
            if case .challenge(_, let method) = $0 { return method == NSURLAuthenticationMethodServerTrust }
            return false
        }
        let reused = try tasks.map { try lastTransaction(delegate, $0).isReusedConnection }
        #expect(reused == Array(repeating: true, count: tasks.count))
        #expect(trustChallenges.count == 1)
    }

    @Test func sequentialHTTP11TasksReuseTheConnection() async throws {
        let server = try await HTTPTest.nginx()
        let delegate = EventDelegate()
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        var reused: [Bool] = []
        for _ in 0..<4 {
            let task = session.dataTask(with: server.url(NginxServer.Files.hello))
            try await HTTPTest.run(task, delegate)
            #expect(delegate.error(of: task) == nil)
            let transaction = try lastTransaction(delegate, task)
            reused.append(transaction.isReusedConnection)
            if transaction.isReusedConnection {
                #expect(transaction.connectStartDate == nil)
                #expect(transaction.connectEndDate == nil)
            }
        }
        #expect(reused == [false, true, true, true])
    }

    @Test func sessionsDoNotShareConnections() async throws {
        let server = try await HTTPTest.nginx()
        let delegate = EventDelegate()
        let one = HTTPTest.session(delegate: delegate)
        let two = HTTPTest.session(delegate: delegate)
        defer {
            one.finishTasksAndInvalidate()
            two.finishTasksAndInvalidate()
        }
        let first = one.dataTask(with: server.url(NginxServer.Files.hello))
        try await HTTPTest.run(first, delegate)
        let second = two.dataTask(with: server.url(NginxServer.Files.hello))
        try await HTTPTest.run(second, delegate)
        #expect(try lastTransaction(delegate, second).isReusedConnection == false)
    }
}
