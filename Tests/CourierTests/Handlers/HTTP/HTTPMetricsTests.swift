import Foundation
import Testing
@testable import Courier

/// `URLSessionTaskMetrics` for HTTP loads: one transaction per request, the connection's
/// addresses and protocol, ordered timestamps and byte counts.
@Suite("HTTP metrics")
struct HTTPMetricsTests {

    @Test func simpleGET() async throws {
        let server = try await HTTPTest.nginx()
        let delegate = EventDelegate()
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let url = server.url(NginxServer.Files.medium)
        let task = session.dataTask(with: url)
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        let metrics = try #require(delegate.metrics(of: task))
        #expect(metrics.redirectCount == 0)
        #expect(metrics.taskInterval.duration > 0)
        #expect(metrics.transactionMetrics.count == 1)
        let transaction = try #require(metrics.transactionMetrics.first)
        #expect(transaction.request.url == url)
        #expect((transaction.response as? HTTPURLResponse)?.statusCode == 200)
        #expect(transaction.networkProtocolName == "http/1.1")
        #expect(transaction.resourceFetchType == .networkLoad)
        #expect(transaction.isReusedConnection == false)
        #expect(transaction.isProxyConnection == false)
        #expect(transaction.remoteAddress == "127.0.0.1")
        #expect(transaction.remotePort.map { "\($0)" } == "\(server.httpPort)")
        #expect(transaction.localAddress == "127.0.0.1")
        #expect(transaction.localPort != nil)
        #expect(transaction.countOfResponseBodyBytesReceived == Int64(NginxServer.Files.mediumSize))
        #expect(transaction.countOfResponseBodyBytesAfterDecoding == Int64(NginxServer.Files.mediumSize))
        #expect(transaction.countOfResponseHeaderBytesReceived > 100)
        #expect(transaction.countOfRequestHeaderBytesSent > 20)
        #expect(transaction.countOfRequestBodyBytesSent == 0)
        // Plain HTTP: no TLS handshake.
        #expect(transaction.secureConnectionStartDate == nil)
        #expect(transaction.secureConnectionEndDate == nil)

        let dates = [transaction.fetchStartDate, transaction.connectStartDate, transaction.connectEndDate,
                     transaction.requestStartDate, transaction.requestEndDate, transaction.responseStartDate,
                     transaction.responseEndDate]
        let present = dates.compactMap { $0 }
        #expect(present.count == dates.count, "missing timestamps: \(dates)")
        #expect(present == present.sorted(), "timestamps out of order: \(present)")
        if let start = transaction.fetchStartDate, let end = transaction.responseEndDate {
            #expect(start >= metrics.taskInterval.start.addingTimeInterval(-0.001))
            #expect(end <= metrics.taskInterval.end.addingTimeInterval(0.001))
        }
    }

    @Test func uploadByteCounts() async throws {
        let server = try FaultServer(routes: ["/sink": .sink])
        defer { server.stop() }
        let delegate = EventDelegate()
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url("/sink"))
        request.httpMethod = "POST"
        let body = try HTTPTest.randomBytes(100_000)
        let task = session.uploadTask(with: request, from: body)
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        let transaction = try #require(delegate.metrics(of: task)?.transactionMetrics.last)
        #expect(transaction.countOfRequestBodyBytesSent == Int64(body.count))
        #expect(transaction.countOfRequestBodyBytesBeforeEncoding == Int64(body.count))
        #expect(transaction.request.httpMethod == "POST")
    }

    @Test func redirectsMakeOneTransactionEach() async throws {
        let server = try await HTTPTest.nginx()
        let delegate = EventDelegate()
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url("/hops/2"))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        let metrics = try #require(delegate.metrics(of: task))
        #expect(metrics.redirectCount == 2)
        #expect(metrics.transactionMetrics.map { ($0.response as? HTTPURLResponse)?.statusCode } == [302, 302, 200])
        #expect(metrics.transactionMetrics.map { $0.request.url?.path } == ["/hops/2", "/hops/1", "/hops/0"])
        // Every exchange, the redirected ones included, carries what the handler measured, and the
        // later requests go over the first connection.
        #expect(metrics.transactionMetrics.map(\.networkProtocolName) == ["http/1.1", "http/1.1", "http/1.1"])
        #expect(metrics.transactionMetrics.map(\.remoteAddress) == ["127.0.0.1", "127.0.0.1", "127.0.0.1"])
        let laterReused = metrics.transactionMetrics.dropFirst().map(\.isReusedConnection)
        #expect(laterReused == [true, true])
        #expect(metrics.transactionMetrics.last?.networkProtocolName == "http/1.1")
    }

    @Test func httpsTransactionHasTLSTimes() async throws {
        let server = try await HTTPTest.nginx()
        let delegate = try HTTPTest.trustingDelegate(server)
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.httpsURL(NginxServer.Files.hello))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        let transaction = try #require(delegate.metrics(of: task)?.transactionMetrics.last)
        #expect(transaction.networkProtocolName == "h2")
        #expect(transaction.remotePort.map { "\($0)" } == "\(server.httpsPort)")
        if !transaction.isReusedConnection {
            let start = try #require(transaction.secureConnectionStartDate)
            let end = try #require(transaction.secureConnectionEndDate)
            #expect(start <= end)
        }
        // Reported for reused connections too: the TLS session is the connection's.
        #expect(transaction.negotiatedTLSProtocolVersion == .TLSv13, "nginx allows TLS 1.2 and 1.3; libcurl prefers 1.3")
        #expect(transaction.negotiatedTLSCipherSuite.map { [0x1301, 0x1302, 0x1303].contains($0.rawValue) } == true,
                "a TLS 1.3 cipher suite")
    }

    @Test func failedLoadStillReportsMetrics() async throws {
        let server = try FaultServer(routes: ["/short": .truncated(body: Data(repeating: 1, count: 10), declaredLength: 100)])
        defer { server.stop() }
        let delegate = EventDelegate()
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url("/short"))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) != nil)
        #expect(delegate.collapsedNames(for: task).suffix(2) == ["metrics", "complete"])
        #expect(delegate.metrics(of: task)?.transactionMetrics.count == 1)
    }
}
