import Foundation

/// The NTLM server of `ntlm_server.py` (next to this file; its paths and users are listed there;
/// started by ``AuthTestServerLaunch``):
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
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-ntlm-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        TestServerExitCleanup.removeAtExit(directory)
        let (ports, process) = try AuthTestServerLaunch.start("ntlm_server.py", in: directory, pki: pki,
                                                              requirement: "pyspnego is in scripts/requirements-test.txt")
        return (NTLMTestServer(httpPort: ports.http, httpsPort: ports.https, pki: pki), process)
    }
}
