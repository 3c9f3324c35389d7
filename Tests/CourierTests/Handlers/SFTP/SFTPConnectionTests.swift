import Foundation
import Testing
@testable import Courier

/// Connections: one per host, port and user, reused across a session's tasks and carrying several
/// transfers at once; cancellation; and the connection-level errors (refused, not SSH, silent,
/// unknown host, dropped mid-transfer).
extension SFTPTests {
    @Suite("SFTP connections")
    struct ConnectionTests {
        @Test func tasksShareOneConnection() async throws {
            let server = try await SFTPTest.server()
            let delegate = EventDelegate()
            let session = SFTPTest.session(server, delegate: delegate)
            defer { session.finishTasksAndInvalidate() }
            let before = server.acceptedLogins()
            var tasks: [URLSessionTask] = []
            for name in [SSHServer.Files.hello, SSHServer.Files.lines, "\(SSHServer.Files.directory)/"] {
                let task = session.dataTask(with: server.url(name, password: true))
                try await SFTPTest.run(task, delegate)
                #expect(delegate.error(of: task) == nil)
                tasks.append(task)
            }
            #expect(await server.waitForLogins(before + 1))
            let reused = tasks.compactMap { delegate.metrics(of: $0)?.transactionMetrics.last?.isReusedConnection }
            #expect(reused == [false, true, true])
        }

        @Test func concurrentTransfersOnOneConnection() async throws {
            let server = try await SFTPTest.server()
            let session = SFTPTest.session(server)
            defer { session.finishTasksAndInvalidate() }
            let before = server.acceptedLogins()
            let count = 6
            let results = Locked<[Int: DataResult]>([:])
            for index in 0..<count {
                let task = session.dataTask(with: server.url(SSHServer.Files.big, password: true)) { data, response, error in
                    results.withLock { $0[index] = DataResult(data: data, response: response, error: error) }
                }
                task.resume()
            }
            #expect(await waitUntil(timeout: 60) { results.current.count == count })
            for (_, result) in results.current {
                #expect(result.error == nil)
                #expect(result.data.map(StreamHash.of) == server.bigHash)
            }
            #expect(await server.waitForLogins(before + 1))
        }

        @Test func cancellingATransferLeavesTheConnectionUsable() async throws {
            let server = try await SFTPTest.server()
            let delegate = EventDelegate(EventDelegate.Hooks(data: { task, _ in task.cancel() }))
            let session = SFTPTest.session(server, delegate: delegate)
            defer { session.finishTasksAndInvalidate() }
            let before = server.acceptedLogins()
            let cancelled = session.dataTask(with: server.url(SSHServer.Files.big, password: true))
            try await SFTPTest.run(cancelled, delegate)
            #expect(try SFTPTest.urlError(delegate.error(of: cancelled)).code == .cancelled)
            for _ in 0..<3 {
                let result = try await session.loadData(server.url(SSHServer.Files.medium, password: true))
                #expect(result.error == nil)
                #expect(result.data?.count == SSHServer.Files.mediumSize)
            }
            #expect(await server.waitForLogins(before + 1))
        }

        @Test func droppedConnectionMidTransfer() async throws {
            let server = try await SFTPTest.server()
            let proxy = try TCPTestServer(.proxy(port: server.port, cutAfter: 3 << 20))
            defer { proxy.stop() }
            let knownHosts = server.prefix.appendingPathComponent("known_hosts_proxy_\(proxy.port)")
            try Data(SSHServer.knownHostsLine(port: proxy.port, key: server.hostKey).utf8).write(to: knownHosts)
            let delegate = EventDelegate()
            let session = SFTPTest.session(server, delegate: delegate) { $0.sshKnownHostsURL = knownHosts }
            defer { session.finishTasksAndInvalidate() }
            let task = session.downloadTask(with: server.url(SSHServer.Files.big, password: true, port: proxy.port))
            try await SFTPTest.run(task, delegate, timeout: 30)
            let error = try SFTPTest.urlError(delegate.error(of: task))
            #expect(error.code == .networkConnectionLost)
            #expect(proxy.cuts == 1)
            #expect(delegate.events(for: task).contains { $0.name == "wrote" }, "the transfer had started")
            #expect(error.downloadTaskResumeData != nil)
        }

        @Test func refusedConnection() async throws {
            let server = try await SFTPTest.server()
            let session = SFTPTest.session(server)
            defer { session.finishTasksAndInvalidate() }
            let port = try HTTPTest.refusedPort()
            let result = try await session.loadData(URL(string: "sftp://\(SSHServer.user)@127.0.0.1:\(port)/x")!)
            #expect(try SFTPTest.urlError(result.error).code == .cannotConnectToHost)
        }

        @Test func unknownHost() async throws {
            let server = try await SFTPTest.server()
            let session = SFTPTest.session(server)
            defer { session.finishTasksAndInvalidate() }
            let result = try await session.loadData(URL(string: "sftp://\(SSHServer.user)@\(HTTPTest.unresolvableHost)/x")!)
            #expect(try SFTPTest.urlError(result.error).code == .cannotFindHost)
        }

        @Test func serverThatIsNotSSH() async throws {
            let server = try await SFTPTest.server()
            let other = try TCPTestServer(.greet(Data("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".utf8)))
            defer { other.stop() }
            let session = SFTPTest.session(server)
            defer { session.finishTasksAndInvalidate() }
            let result = try await session.loadData(URL(string: "sftp://\(SSHServer.user)@127.0.0.1:\(other.port)/x")!)
            let code = try SFTPTest.urlError(result.error).code
            #expect(code == .badServerResponse, "got \(code)")
        }

        @Test func silentServerTimesOut() async throws {
            let server = try await SFTPTest.server()
            let silent = try TCPTestServer(.silent)
            defer { silent.stop() }
            let session = SFTPTest.session(server) { $0.timeoutIntervalForRequest = 1 }
            defer { session.finishTasksAndInvalidate() }
            let started = Date()
            let result = try await session.loadData(URL(string: "sftp://\(SSHServer.user)@127.0.0.1:\(silent.port)/x")!)
            #expect(try SFTPTest.urlError(result.error).code == .timedOut)
            #expect(Date().timeIntervalSince(started) < 8)
        }

        @Test func invalidatingTheSessionEndsItsConnections() async throws {
            let server = try await SFTPTest.server()
            let session = SFTPTest.session(server)
            let result = try await session.loadData(server.url(SSHServer.Files.hello, password: true))
            #expect(result.error == nil)
            let loop = session.environment.resources.resource(SSHEventLoop.resourceKey) { nil as SSHEventLoop? }
            #expect(loop != nil)
            session.invalidateAndCancel()
            #expect(await waitUntil { loop?.submit(SFTPJob(url: server.url("x"), path: "x",
                                                           key: SSHConnectionKey(url: server.url("x"))!,
                                                           handler: SFTPURLProtocol(request: URLRequest(url: server.url("x")),
                                                                                    cachedResponse: nil, client: nil))) == false })
        }
    }
}
