import Foundation
import Logging
import Testing
@testable import Courier

/// What a session logs to the `Logger` of its configuration, against the real test servers: the
/// task lifecycle and each connection at `debug`, libcurl's wire trace at `trace` with credentials
/// redacted, and nothing at `info` for loads that go as expected.
@Suite("Logging")
struct LoggingTests {
    /// An HTTP test session logging to `store` at `level`.
    static func session(_ store: RecordingLogHandler.Store, level: Logger.Level, secrets: Bool = false,
                        delegate: (any URLSessionDelegate)? = nil) -> URLSession {
        HTTPTest.session(delegate: delegate) {
            $0.logger = store.logger(level: level)
            $0.logsSecrets = secrets
        }
    }

    /// Waits (bounded) until the session forgot its tasks: their `task completed` records are in.
    static func waitForCompletionRecords(_ session: URLSession) async -> Bool {
        await waitUntil { session.liveTasks.isEmpty }
    }

    /// A request for nginx's `/headers` carrying Basic credentials and a cookie.
    static func credentialRequest(_ server: NginxServer) -> URLRequest {
        var request = URLRequest(url: server.url("/headers"))
        request.setValue("Basic \(secretToken)", forHTTPHeaderField: "Authorization")
        request.setValue("session=\(secretCookie)", forHTTPHeaderField: "Cookie")
        return request
    }

    static let secretToken = Data("courier:open sesame".utf8).base64EncodedString()
    static let secretCookie = "c00kie-value-42"

    @Test func taskLifecycleIsLoggedAtDebugWithTaskURLAndOutcome() async throws {
        let server = try await HTTPTest.nginx()
        let store = RecordingLogHandler.Store()
        let session = Self.session(store, level: .debug)
        defer { session.finishTasksAndInvalidate() }
        let url = server.url(NginxServer.Files.hello)
        let result = try await session.loadData(url)
        #expect(result.error == nil)
        #expect(await Self.waitForCompletionRecords(session))
        let lifecycle = store.all.filter { $0.message.hasPrefix("task ") }
        #expect(lifecycle.map(\.message) == ["task created", "task resumed", "task completed"])
        for record in lifecycle {
            #expect(record.level == .debug)
            #expect(record.metadata[CourierLogKey.task] == "1")
            #expect(record.metadata[CourierLogKey.kind] == "data")
            #expect(record.metadata[CourierLogKey.url] == url.absoluteString)
        }
        let completed = try #require(lifecycle.last)
        #expect(completed.metadata[CourierLogKey.outcome] == "success")
        #expect(completed.metadata[CourierLogKey.status] == "200")
        #expect(completed.metadata[CourierLogKey.bytes] == "\(NginxServer.Files.helloContents.count)")
    }

    @Test func aCancelledTaskIsLoggedAsCancelled() async throws {
        let server = try await HTTPTest.nginx()
        let store = RecordingLogHandler.Store()
        let session = Self.session(store, level: .debug)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url("/slow" + NginxServer.Files.big)) { _, _, _ in }
        task.resume()
        task.cancel()
        #expect(await Self.waitForCompletionRecords(session))
        #expect(store.all.map(\.message).filter { $0.hasPrefix("task ") }
            == ["task created", "task resumed", "task cancelled", "task completed"])
        #expect(store.records("task completed").first?.metadata[CourierLogKey.outcome] == "cancelled")
    }

    @Test func eachConnectionIsLoggedAtDebugWithItsHTTPVersion() async throws {
        let server = try await HTTPTest.nginx()
        let store = RecordingLogHandler.Store()
        let session = Self.session(store, level: .debug)
        defer { session.finishTasksAndInvalidate() }
        _ = try await session.loadData(server.url(NginxServer.Files.hello))
        _ = try await session.loadData(server.url(NginxServer.Files.json))
        #expect(await Self.waitForCompletionRecords(session))
        let connections = store.all.filter { $0.message.hasPrefix("connection ") }
        #expect(connections.map(\.message) == [
            "connection 127.0.0.1:\(server.httpPort) new, http/1.1",
            "connection 127.0.0.1:\(server.httpPort) reused, http/1.1",
        ])
        #expect(connections.map { $0.metadata[CourierLogKey.task] } == ["1", "2"])
    }

    @Test func anHTTPSConnectionIsLoggedWithItsTLSVersionAndCipher() async throws {
        let server = try await HTTPTest.nginx()
        let store = RecordingLogHandler.Store()
        let delegate = try HTTPTest.trustingDelegate(server)
        let session = Self.session(store, level: .debug, delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.httpsURL(NginxServer.Files.hello))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        let connection = try #require(store.all.last { $0.message.hasPrefix("connection ") })
        #expect(connection.metadata["courier.tls"]?.hasPrefix("TLSv1.") == true, "\(connection.metadata)")
        #expect(connection.message.contains(", TLSv1."), "\(connection.message)")
        #expect(connection.message.contains(" TLS_"), "\(connection.message)")
    }

    @Test func traceCarriesTheHeaderLinesWithCredentialsRedacted() async throws {
        let server = try await HTTPTest.nginx()
        let store = RecordingLogHandler.Store()
        let session = Self.session(store, level: .trace)
        defer { session.finishTasksAndInvalidate() }
        let result = try await session.loadData(Self.credentialRequest(server))
        #expect(result.error == nil)
        #expect(await Self.waitForCompletionRecords(session))
        let sent = store.wireLines(.headerOut)
        #expect(sent.first == "GET /headers HTTP/1.1")
        #expect(sent.contains("Host: 127.0.0.1:\(server.httpPort)"))
        #expect(sent.contains("Authorization: Basic [redacted]"), "\(sent)")
        #expect(sent.contains("Cookie: [redacted]"), "\(sent)")
        #expect(store.wireLines(.headerIn).first == "HTTP/1.1 200 OK")
        #expect(store.wireLines(.dataIn).allSatisfy { $0.hasSuffix(" bytes data]") })
        #expect(!store.all.contains { $0.message.contains(Self.secretToken) || $0.message.contains(Self.secretCookie) })
        let wire = store.all.filter { $0.wire != nil }
        #expect(wire.allSatisfy { $0.level == .trace && $0.metadata[CourierLogKey.task] == "1" })
    }

    @Test func setCookieIsRedactedInTheTrace() async throws {
        let server = try await HTTPTest.nginx()
        let store = RecordingLogHandler.Store()
        let session = Self.session(store, level: .trace)
        defer { session.finishTasksAndInvalidate() }
        let result = try await session.loadData(server.url("/cookies/set?name=flavour&value=oatmeal"))
        #expect(result.error == nil)
        #expect(await Self.waitForCompletionRecords(session))
        let received = store.wireLines(.headerIn)
        #expect(received.contains("Set-Cookie: [redacted]"), "\(received)")
    }

    @Test func traceKeepsCredentialsOnlyWhenTheSessionLogsSecrets() async throws {
        let server = try await HTTPTest.nginx()
        let store = RecordingLogHandler.Store()
        let session = Self.session(store, level: .trace, secrets: true)
        defer { session.finishTasksAndInvalidate() }
        _ = try await session.loadData(Self.credentialRequest(server))
        #expect(await Self.waitForCompletionRecords(session))
        #expect(store.wireLines(.headerOut).contains("Authorization: Basic \(Self.secretToken)"))
    }

    @Test func nothingIsLoggedAtInfoForASuccessfulGET() async throws {
        let server = try await HTTPTest.nginx()
        let store = RecordingLogHandler.Store()
        let session = Self.session(store, level: .info)
        defer { session.finishTasksAndInvalidate() }
        let result = try await session.loadData(server.url(NginxServer.Files.hello))
        #expect(result.data == NginxServer.Files.helloContents)
        #expect(await Self.waitForCompletionRecords(session))
        #expect(store.all.isEmpty, "\(store.all.map(\.message))")
    }

    @Test func atInfoAGETCostsOnlyAFewLevelChecks() async throws {
        let server = try await HTTPTest.nginx()
        let store = RecordingLogHandler.Store()
        let session = Self.session(store, level: .info)
        defer { session.finishTasksAndInvalidate() }
        let before = store.levelReads
        _ = try await session.loadData(server.url(NginxServer.Files.hello))
        #expect(await Self.waitForCompletionRecords(session))
        // created, resumed, the handler's configuration, the libcurl attempt, completed: one level
        // read each; no message, no metadata, no libcurl trace.
        #expect(store.levelReads - before == 5, "\(store.levelReads - before) level reads")
    }

    @Test func debugLevelHasNoWireTrace() async throws {
        let server = try await HTTPTest.nginx()
        let store = RecordingLogHandler.Store()
        let session = Self.session(store, level: .debug)
        defer { session.finishTasksAndInvalidate() }
        _ = try await session.loadData(Self.credentialRequest(server))
        #expect(await Self.waitForCompletionRecords(session))
        #expect(!store.all.isEmpty && store.all.allSatisfy { $0.wire == nil && $0.level == .debug })
    }

    @Test func ftpPasswordIsRedactedInTheTrace() async throws {
        let ftp = try await FTPTest.servers()
        let store = RecordingLogHandler.Store()
        let session = FTPTest.session { $0.logger = store.logger(level: .trace) }
        defer { session.finishTasksAndInvalidate() }
        let url = ftp.url(FTPTestServer.Files.hello, user: FTPTestServer.user, password: FTPTestServer.password)
        let result = try await session.loadData(url)
        #expect(result.data == FTPTestServer.Files.helloContents)
        #expect(await Self.waitForCompletionRecords(session))
        let sent = store.wireLines(.headerOut)
        #expect(sent.contains("USER \(FTPTestServer.user)"), "\(sent)")
        #expect(sent.contains("PASS [redacted]"), "\(sent)")
        // The password is "open sesame": neither it nor its percent-encoded form is in any record.
        #expect(!store.all.contains { $0.message.contains("sesame") || $0.metadata.values.contains { $0.contains("sesame") } })
        #expect(store.records("task created").first?.metadata[CourierLogKey.url]?.contains("courier:[redacted]@") == true)
    }
}
