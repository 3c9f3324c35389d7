import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The Python `websockets` server of the WebSocket task tests (`websocket_server.py`, next to this
/// file; its paths are listed there): plain ws on ``wsPort``, wss on ``wssPort`` with the test PKI's
/// server certificate (``NginxTLSServer/PKI``: trust ``pki``'s root CA to accept it). Started once
/// per test process on first use; it exits when the test process does (its stdin closes).
final class WebSocketTestServer: Sendable {
    let wsPort: Int
    let wssPort: Int
    let pki: NginxTLSServer.PKI

    private init(wsPort: Int, wssPort: Int, pki: NginxTLSServer.PKI) {
        self.wsPort = wsPort
        self.wssPort = wssPort
        self.pki = pki
    }

    /// `ws://127.0.0.1:<port><path>` (`wss://` with `secure`).
    func url(_ path: String, secure: Bool = false) -> URL {
        URL(string: "\(secure ? "wss" : "ws")://127.0.0.1:\(secure ? wssPort : wsPort)\(path)")!
    }

    private static let launch = SharedServerLaunch<WebSocketTestServer>(name: "the WebSocket test server") {
        let pki = try awaitPKI()
        let (ports, process) = try start(pki: pki)
        return (WebSocketTestServer(wsPort: ports.ws, wssPort: ports.wss, pki: pki), process)
    }

    /// The process's WebSocket server, started on first use (bounded).
    static func shared() async throws -> WebSocketTestServer { try await launch.server() }

    /// The test PKI of ``NginxTLSServer`` (which it makes when it starts), waited for on this
    /// launching thread.
    private static func awaitPKI() throws -> NginxTLSServer.PKI {
        let result = Locked<Result<NginxTLSServer.PKI, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let outcome: Result<NginxTLSServer.PKI, any Error>
            do { outcome = .success(try await NginxTLSServer.shared().pki) } catch { outcome = .failure(error) }
            result.withLock { $0 = outcome }
            done.signal()
        }
        guard done.wait(timeout: .now() + 90) == .success, let outcome = result.withLock({ $0 }) else {
            throw FaultServerError("the test PKI was not ready within 90 s")
        }
        return try outcome.get()
    }

    private static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("websocket_server.py")

    private static func start(pki: NginxTLSServer.PKI) throws -> ((ws: Int, wss: Int), Process) {
        var failures: [String] = []
        for python in FTPTestServer.pythonCandidates() {
            let output = FileManager.default.temporaryDirectory.appendingPathComponent("courier-ws-\(UUID().uuidString).out")
            let log = output.appendingPathExtension("log")
            try Data().write(to: output)
            try Data().write(to: log)
            TestServerExitCleanup.removeAtExit(output)
            TestServerExitCleanup.removeAtExit(log)
            let outputHandle = try FileHandle(forWritingTo: output), logHandle = try FileHandle(forWritingTo: log)
            defer { try? outputHandle.close(); try? logHandle.close() }
            // Its stdin is a pipe only this process can write: it reads end-of-file when this process ends.
            let stdin = Pipe()
            let process = Process()
            process.executableURL = URL(fileURLWithPath: python)
            process.arguments = [script.path, "--cert", pki.serverChain.path,
                                 "--key", pki.directory.appendingPathComponent("server.key").path]
            process.standardInput = stdin
            process.standardOutput = outputHandle
            process.standardError = logHandle
            try process.run()
            let input = stdin.fileHandleForWriting
            TestServerExitCleanup.atExit { try? input.close() }
            TestServerExitCleanup.stopAtExit(pid: process.processIdentifier)
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline, process.isRunning {
                let text = (try? Data(contentsOf: output)) ?? Data()
                if let end = text.firstIndex(of: UInt8(ascii: "\n")),
                   let object = try? JSONSerialization.jsonObject(with: text[..<end]) as? [String: Int],
                   let ws = object["ws"], let wss = object["wss"] {
                    return ((ws, wss), process)
                }
                usleep(20_000)
            }
            let logText = String(decoding: ((try? Data(contentsOf: log)) ?? Data()).suffix(2000), as: UTF8.self)
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            guard process.terminationStatus == 3 else {
                throw FaultServerError("websocket_server.py did not start: \(logText)")
            }
            failures.append("\(python): \(logText)")
        }
        throw FaultServerError("the websockets package is not installed for any python3 (run scripts/setup): "
                               + failures.joined(separator: "; "))
    }
}
