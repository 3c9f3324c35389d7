import Foundation

/// The Python server of `negotiate_server.py` (next to this file; its paths are listed there;
/// started by ``AuthTestServerLaunch``): an HTTP/1.1 server on 127.0.0.1 that requires Negotiate
/// with the service key of ``KerberosTestRealm`` (pyspnego with the `gssapi` package,
/// `scripts/requirements-test.txt`), with a plain endpoint (`/data`) and a WebSocket echo endpoint
/// (`/ws`), on ``port`` and over TLS on ``httpsPort`` with the test PKI's server certificate
/// (``NginxTLSServer/PKI``: trust ``pki``'s root CA to accept it). Started once per test process on
/// first use (bounded); it ends with the test process (its parent-death signal).
final class NegotiateTestServer: Sendable {
    /// The plain HTTP port (http and ws).
    let port: Int
    /// The TLS port (https and wss).
    let httpsPort: Int
    /// The realm whose tickets it accepts.
    let realm: KerberosTestRealm
    /// The PKI whose server certificate the TLS port presents.
    let pki: NginxTLSServer.PKI

    private init(ports: AuthTestServerLaunch.Ports, realm: KerberosTestRealm, pki: NginxTLSServer.PKI) {
        port = ports.http
        httpsPort = ports.https
        self.realm = realm
        self.pki = pki
    }

    /// `http://127.0.0.1:<port><path>`, or `ws://` with `webSocket`; with `secure`, `https://` or
    /// `wss://` on the TLS port.
    func url(_ path: String, webSocket: Bool = false, secure: Bool = false) -> URL {
        let scheme = (webSocket ? "ws" : "http") + (secure ? "s" : "")
        return URL(string: "\(scheme)://127.0.0.1:\(secure ? httpsPort : port)\(path)")!
    }

    private static let launch = SharedServerLaunch<NegotiateTestServer>(name: "the Negotiate test server") {
        let (realm, pki) = try awaitFixtures()
        // The server's process dies with the test process (its parent-death signal).
        let (ports, _) = try AuthTestServerLaunch.start("negotiate_server.py", in: realm.directory, pki: pki,
                                                        environment: realm.environment(),
                                                        requirement: "pyspnego and gssapi: run scripts/setup")
        return (NegotiateTestServer(ports: ports, realm: realm, pki: pki), nil)
    }

    /// The process's server (and its realm), started on first use (bounded).
    static func shared() async throws -> NegotiateTestServer { try await launch.server() }

    /// The realm and the test PKI (nginx's), waited for on this launching thread.
    private static func awaitFixtures() throws -> (KerberosTestRealm, NginxTLSServer.PKI) {
        let result = Locked<Result<(KerberosTestRealm, NginxTLSServer.PKI), any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let outcome: Result<(KerberosTestRealm, NginxTLSServer.PKI), any Error>
            do {
                outcome = .success((try await KerberosTestRealm.shared(), try await NginxTLSServer.shared().pki))
            } catch {
                outcome = .failure(error)
            }
            result.withLock { $0 = outcome }
            done.signal()
        }
        guard done.wait(timeout: .now() + 3 * testWaitLimit) == .success, let outcome = result.current else {
            throw FaultServerError("the Kerberos test realm and the test PKI were not ready within \(3 * testWaitLimit) s")
        }
        return try outcome.get()
    }
}
