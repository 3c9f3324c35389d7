import Foundation

/// The Python servers of `stream_tls_server.py` (next to this file) for the stream-task tests: TLS
/// echo, STARTTLS, and an HTTP `101` upgrade. Each mode is started once per test process on first
/// use, on 127.0.0.1, with the certificate ``NginxTLSServer``'s test PKI issues for 127.0.0.1
/// (leaf and intermediate; the root is not sent), and ends with the test process.
final class StreamTLSServer: @unchecked Sendable {
    enum Mode: String, Sendable {
        case tlsEcho = "tls-echo"
        case startTLS = "starttls"
        case upgrade = "upgrade"
        /// TLS echo with the PKI's certificate for `other.example` only.
        case wrongHostEcho = "wrong-host-echo"

        /// The script's mode.
        var scriptMode: String { self == .wrongHostEcho ? Mode.tlsEcho.rawValue : rawValue }
        /// The certificate and key file names in the PKI (the intermediate CA is sent after it).
        var certificate: (leaf: String, key: String) {
            self == .wrongHostEcho ? ("wrong-host.pem", "wrong-host.key") : ("server.pem", "server.key")
        }
    }

    let port: Int
    /// The test PKI (its root CA makes the server trusted).
    let pki: NginxTLSServer.PKI
    private let process: TestChildProcess

    private init(port: Int, pki: NginxTLSServer.PKI, process: TestChildProcess) {
        self.port = port
        self.pki = pki
        self.process = process
    }

    private static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("stream_tls_server.py")
    private static let started = Locked<[Mode: StreamTLSServer]>([:])

    /// The server of `mode`, started on first use.
    static func shared(_ mode: Mode) async throws -> StreamTLSServer {
        if let server = started.current[mode] { return server }
        let pki = try await NginxTLSServer.shared().pki
        let server = try start(mode, pki: pki)
        return started.withLock { servers in
            if let existing = servers[mode] {
                server.process.stop()
                return existing
            }
            servers[mode] = server
            return server
        }
    }

    private static func start(_ mode: Mode, pki: NginxTLSServer.PKI) throws -> StreamTLSServer {
        guard let python = ["/usr/bin/python3", "/usr/local/bin/python3"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw FaultServerError("no python3: run scripts/setup")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-stream-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        TestServerExitCleanup.removeAtExit(directory)
        let portFile = directory.appendingPathComponent("port")
        let chain = directory.appendingPathComponent("chain.pem")
        try (Data(contentsOf: pki.directory.appendingPathComponent(mode.certificate.leaf)) + Data(contentsOf: pki.intermediateCA)).write(to: chain)
        let process = try TestChildProcess(python, [script.path, "--mode", mode.scriptMode,
                                                    "--cert", chain.path,
                                                    "--key", pki.directory.appendingPathComponent(mode.certificate.key).path,
                                                    "--port-file", portFile.path],
                                           output: directory.appendingPathComponent("log"), diesWithTests: true)
        let deadline = Date().addingTimeInterval(testWaitLimit)
        while Date() < deadline {
            if let text = try? String(contentsOf: portFile, encoding: .utf8), let port = Int(text) {
                return StreamTLSServer(port: port, pki: pki, process: process)
            }
            guard process.isRunning else { break }
            usleep(10_000)
        }
        process.stop()
        let log = (try? String(contentsOf: directory.appendingPathComponent("log"), encoding: .utf8)) ?? ""
        throw FaultServerError("stream_tls_server.py (\(mode.rawValue)) did not start: \(log)")
    }
}
