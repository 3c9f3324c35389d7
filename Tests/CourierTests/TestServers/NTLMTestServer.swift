import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The NTLM server of `ntlm_server.py` (next to this file; its paths and users are listed there):
/// HTTP/1.1 with keep-alive, NTLM verified by pyspnego, on ``httpPort`` and over TLS on
/// ``httpsPort`` with the test PKI's server certificate (``NginxTLSServer/PKI``: trust ``pki``'s
/// root CA to accept it). Started once per test process on first use, on 127.0.0.1; it ends with
/// the test process.
final class NTLMTestServer: Sendable {
    let httpPort: Int
    let httpsPort: Int
    let pki: NginxTLSServer.PKI

    private init(httpPort: Int, httpsPort: Int, pki: NginxTLSServer.PKI) {
        self.httpPort = httpPort
        self.httpsPort = httpsPort
        self.pki = pki
    }

    /// `<scheme>://127.0.0.1:<port><path>`, the port being the TLS one for https and wss.
    func url(_ path: String, scheme: String) -> URL {
        let secure = scheme == "https" || scheme == "wss"
        return URL(string: "\(scheme)://127.0.0.1:\(secure ? httpsPort : httpPort)\(path)")!
    }

    private static let started = Locked<NTLMTestServer?>(nil)
    private static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("ntlm_server.py")

    /// The process's NTLM server, started on first use (bounded).
    static func shared() async throws -> NTLMTestServer {
        if let server = started.current { return server }
        let pki = try await NginxTLSServer.shared().pki
        let (server, process) = try start(pki: pki)
        return started.withLock { current in
            if let existing = current {
                process.stop()
                return existing
            }
            current = server
            return server
        }
    }

    private static func start(pki: NginxTLSServer.PKI) throws -> (NTLMTestServer, TestChildProcess) {
        guard let python = FTPTestServer.pythonCandidates().first else { throw FaultServerError("no python3: run scripts/setup") }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-ntlm-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        TestServerExitCleanup.removeAtExit(directory)
        let portFile = directory.appendingPathComponent("ports")
        let log = directory.appendingPathComponent("log")
        let process = try TestChildProcess(python, [script.path, "--port-file", portFile.path, "--cert", pki.serverChain.path,
                                                    "--key", pki.directory.appendingPathComponent("server.key").path],
                                           output: log, diesWithTests: true)
        let deadline = Date().addingTimeInterval(testWaitLimit)
        while Date() < deadline {
            if let data = try? Data(contentsOf: portFile),
               let ports = try? JSONSerialization.jsonObject(with: data) as? [String: Int],
               let http = ports["http"], let https = ports["https"] {
                return (NTLMTestServer(httpPort: http, httpsPort: https, pki: pki), process)
            }
            guard process.isRunning else { break }
            usleep(10_000)
        }
        process.stop()
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        throw FaultServerError("ntlm_server.py did not start (pyspnego is in scripts/requirements-test.txt): \(text)")
    }
}
