import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Starts one of the Python authentication test servers beside this file (`ntlm_server.py`,
/// `negotiate_server.py`; their shared part is `auth_server_support.py`): HTTP/1.1 on one
/// 127.0.0.1 port and the same over TLS, with the test PKI's server certificate, on another. The
/// server writes `{"http": port, "https": port}` to its port file once both listen; this waits for
/// that file (bounded) and stops the server if it never comes.
enum AuthTestServerLaunch {
    /// The two ports a started server listens on.
    struct Ports: Sendable {
        /// Plain HTTP (http and ws URLs).
        let http: Int
        /// TLS (https and wss URLs).
        let https: Int
    }

    /// Starts `script` (a file beside this one) with its port file and log in `directory`, TLS with
    /// `pki`'s server chain and key, and `environment` (the test process's when `nil`); the child
    /// dies with the test process. `requirement` names what a failed start most likely lacks, for the
    /// error, which also carries the end of the server's log.
    static func start(_ script: String, in directory: URL, pki: NginxTLSServer.PKI, environment: [String: String]? = nil,
                      requirement: String) throws -> (Ports, TestChildProcess) {
        guard let python = FTPTestServer.pythonCandidates().first else { throw FaultServerError("no python3: run scripts/setup") }
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(script).path
        let portFile = directory.appendingPathComponent("\(script).ports")
        let log = directory.appendingPathComponent("\(script).log")
        let process = try TestChildProcess(python, [path, "--port-file", portFile.path, "--cert", pki.serverChain.path,
                                                    "--key", pki.directory.appendingPathComponent("server.key").path],
                                           environment: environment, output: log, diesWithTests: true)
        TestServerExitCleanup.stopAtExit(pid: process.pid)
        let deadline = Date().addingTimeInterval(testWaitLimit)
        while Date() < deadline {
            if let data = try? Data(contentsOf: portFile),
               let ports = try? JSONSerialization.jsonObject(with: data) as? [String: Int],
               let http = ports["http"], let https = ports["https"] {
                return (Ports(http: http, https: https), process)
            }
            guard process.isRunning else { break }
            usleep(10_000)
        }
        process.stop()
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        throw FaultServerError("\(script) did not start within \(testWaitLimit) s (\(requirement)): \(text.suffix(2000))")
    }
}
