import Foundation

/// The Python server of `negotiate_server.py` (next to this file; its paths are listed there): an
/// HTTP/1.1 server on 127.0.0.1 that requires Negotiate with the service key of ``KerberosTestRealm``
/// (pyspnego with the `gssapi` package, `scripts/requirements-test.txt`), with a plain endpoint
/// (`/data`) and a WebSocket echo endpoint (`/ws`). Started once per test process on first use
/// (bounded); it ends with the test process (its parent-death signal).
final class NegotiateTestServer: Sendable {
    let port: Int
    /// The realm whose tickets it accepts.
    let realm: KerberosTestRealm

    private init(port: Int, realm: KerberosTestRealm) {
        self.port = port
        self.realm = realm
    }

    /// `http://127.0.0.1:<port><path>`, or `ws://` with `webSocket`.
    func url(_ path: String, webSocket: Bool = false) -> URL {
        URL(string: "\(webSocket ? "ws" : "http")://127.0.0.1:\(port)\(path)")!
    }

    private static let launch = SharedServerLaunch<NegotiateTestServer>(name: "the Negotiate test server") {
        let realm = try awaitRealm()
        return (try start(realm: realm), nil)
    }

    /// The process's server (and its realm), started on first use (bounded).
    static func shared() async throws -> NegotiateTestServer { try await launch.server() }

    /// The realm, waited for on this launching thread.
    private static func awaitRealm() throws -> KerberosTestRealm {
        let result = Locked<Result<KerberosTestRealm, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let outcome: Result<KerberosTestRealm, any Error>
            do { outcome = .success(try await KerberosTestRealm.shared()) } catch { outcome = .failure(error) }
            result.withLock { $0 = outcome }
            done.signal()
        }
        guard done.wait(timeout: .now() + 3 * testWaitLimit) == .success, let outcome = result.current else {
            throw FaultServerError("the Kerberos test realm was not ready within \(3 * testWaitLimit) s")
        }
        return try outcome.get()
    }

    private static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("negotiate_server.py")

    private static func start(realm: KerberosTestRealm) throws -> NegotiateTestServer {
        guard let python = FTPTestServer.pythonCandidates().first else { throw FaultServerError("no python3: run scripts/setup") }
        let portFile = realm.directory.appendingPathComponent("negotiate-port")
        let log = realm.directory.appendingPathComponent("negotiate-server.log")
        let process = try TestChildProcess(python, [script.path, "--port-file", portFile.path], environment: realm.environment(),
                                           output: log, diesWithTests: true)
        TestServerExitCleanup.stopAtExit(pid: process.pid)
        let deadline = Date().addingTimeInterval(testWaitLimit)
        while Date() < deadline, process.isRunning {
            if let text = try? String(contentsOf: portFile, encoding: .utf8), let port = Int(text) {
                return NegotiateTestServer(port: port, realm: realm)
            }
            usleep(10_000)
        }
        process.stop()
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        throw FaultServerError("negotiate_server.py did not start (pyspnego and gssapi: run scripts/setup): \(output.suffix(2000))")
    }
}
