import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A second nginx for the HTTPS tests that need a certificate authority, client certificates or
/// limited TLS versions: started once per test process on first use (like ``NginxServer``), from a
/// fresh temporary directory holding a small PKI made with `openssl` (see ``PKI``), and stopped when
/// the process exits.
///
/// Every nginx port serves `/hello.txt` (``NginxServer/Files/helloContents``) and `/whoami` (text:
/// `dn=<client subject>` and `verify=<nginx's $ssl_client_verify>`); every response carries
/// `X-Client-DN` and `X-Client-Verify` headers and `X-TLS-Protocol` (nginx's `$ssl_protocol`).
/// Session tickets and the session cache are off, so every connection makes a full handshake.
///
/// - ``chainPort``: a certificate for 127.0.0.1/localhost issued by the test intermediate CA; nginx
///   sends the leaf and the intermediate (``PKI/serverChain``).
/// - ``wrongHostPort``: a certificate from the same CA for `other.example` only.
/// - ``expiredPort``: a certificate for 127.0.0.1 from the same CA that expired in 2020.
/// - ``clientCertificatePort``: the chain certificate, and `ssl_verify_client on` with the test root
///   CA: nginx asks every client for a certificate and answers 400 without a valid one.
/// - ``optionalClientCertificatePort``: the same with `ssl_verify_client optional`.
/// - ``tls12Port`` / ``tls13Port``: the chain certificate, TLS 1.2 only / TLS 1.3 only.
///
/// Two `openssl s_server -www` instances (not nginx) stand for servers that refuse the TLS handshake
/// without a client certificate from the test root CA (`-Verify 2 -verify_return_error`), as Apache
/// with `SSLVerifyClient require` does: ``strictClientCertificatePort`` speaks TLS 1.3 only (the
/// refusal comes as an alert after the client's handshake), ``strictClientCertificateTLS12Port`` TLS
/// 1.2 only (the handshake itself fails). They answer every request with a status page that shows
/// the client certificate (`Subject: CN=Courier Client, O=Courier Tests`), one connection at a time.
final class NginxTLSServer: @unchecked Sendable {
    /// The files of the test PKI (all PEM unless said otherwise).
    struct PKI: Sendable {
        let directory: URL
        /// The self-signed root ("Courier Test Root CA").
        var rootCA: URL { directory.appendingPathComponent("root-ca.pem") }
        /// The intermediate CA, issued by the root; it issues the server certificates.
        var intermediateCA: URL { directory.appendingPathComponent("intermediate-ca.pem") }
        /// The server certificate for IP 127.0.0.1 and DNS localhost.
        var serverLeaf: URL { directory.appendingPathComponent("server.pem") }
        /// The leaf followed by the intermediate: what nginx sends.
        var serverChain: URL { directory.appendingPathComponent("server-chain.pem") }
        /// A certificate for `other.example` (no 127.0.0.1, no localhost).
        var wrongHostLeaf: URL { directory.appendingPathComponent("wrong-host.pem") }
        /// A certificate for 127.0.0.1 valid from 2020-01-01 to 2020-02-01.
        var expiredLeaf: URL { directory.appendingPathComponent("expired.pem") }

        /// The client certificate, issued by the root ("CN=Courier Client,O=Courier Tests").
        var clientCertificate: URL { directory.appendingPathComponent("client.pem") }
        /// Its key, unencrypted.
        var clientKey: URL { directory.appendingPathComponent("client.key") }
        /// Its key encrypted with ``clientKeyPassphrase`` (AES-256).
        var clientEncryptedKey: URL { directory.appendingPathComponent("client-encrypted.key") }
        /// Certificate and unencrypted key in one PEM file.
        var clientCombined: URL { directory.appendingPathComponent("client-combined.pem") }
        /// Certificate and key as PKCS#12, protected by ``clientKeyPassphrase``.
        var clientPKCS12: URL { directory.appendingPathComponent("client.p12") }
        /// A client certificate from a CA nginx does not know ("CN=Stranger").
        var strangerCertificate: URL { directory.appendingPathComponent("stranger.pem") }
        var strangerKey: URL { directory.appendingPathComponent("stranger.key") }

        static let clientKeyPassphrase = "courier key secret"
        /// The client certificate's subject as nginx's `$ssl_client_s_dn` writes it (RFC 2253).
        static let clientSubject = "O=Courier Tests,CN=Courier Client"
        static let strangerSubject = "CN=Stranger"
    }

    let chainPort: Int
    let wrongHostPort: Int
    let expiredPort: Int
    let clientCertificatePort: Int
    let optionalClientCertificatePort: Int
    let tls12Port: Int
    let tls13Port: Int
    let strictClientCertificatePort: Int
    let strictClientCertificateTLS12Port: Int
    let pki: PKI
    let prefix: URL

    private init(ports: [Int], prefix: URL) {
        chainPort = ports[0]
        wrongHostPort = ports[1]
        expiredPort = ports[2]
        clientCertificatePort = ports[3]
        optionalClientCertificatePort = ports[4]
        tls12Port = ports[5]
        tls13Port = ports[6]
        strictClientCertificatePort = ports[7]
        strictClientCertificateTLS12Port = ports[8]
        self.prefix = prefix
        pki = PKI(directory: prefix.appendingPathComponent("pki", isDirectory: true))
    }

    /// `https://127.0.0.1:<port><path>`.
    func url(_ port: Int, _ path: String = NginxServer.Files.hello) -> URL {
        URL(string: "https://127.0.0.1:\(port)\(path)")!
    }

    // MARK: The shared instance

    private static let launch = SharedServerLaunch<NginxTLSServer>(name: "nginx-tls") { (try start(), nil) }

    /// The process's TLS nginx, started on first use (bounded).
    static func shared() async throws -> NginxTLSServer { try await launch.server() }

    // MARK: Starting

    private static let portCount = 9

    private static func start() throws -> NginxTLSServer {
        guard let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx"]
            .first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw FaultServerError("no nginx binary: run scripts/setup (apt-get install nginx)")
        }
        guard let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw FaultServerError("no openssl binary: run scripts/setup (apt-get install openssl)")
        }
        let prefix = FileManager.default.temporaryDirectory.appendingPathComponent("courier-nginx-tls-\(UUID().uuidString)", isDirectory: true)
        for directory in ["docroot", "logs", "tmp", "pki"] {
            try FileManager.default.createDirectory(at: prefix.appendingPathComponent(directory, isDirectory: true),
                                                    withIntermediateDirectories: true)
        }
        TestServerExitCleanup.removeAtExit(prefix)
        try NginxServer.Files.helloContents.write(to: prefix.appendingPathComponent("docroot/hello.txt"))
        let pki = PKI(directory: prefix.appendingPathComponent("pki", isDirectory: true))
        try makePKI(pki, openssl: openssl)

        var lastError = "nginx did not start"
        for _ in 0..<3 {
            let ports = try NginxServer.freePorts(portCount)
            let configFile = prefix.appendingPathComponent("nginx.conf")
            try Data(configuration(prefix: prefix, ports: ports).utf8).write(to: configFile)
            let log = prefix.appendingPathComponent("logs/stderr.log")
            let process = try TestChildProcess(nginx, ["-p", prefix.path, "-c", configFile.path,
                                                       "-e", prefix.appendingPathComponent("logs/error.log").path],
                                               output: log, diesWithTests: true)
            TestServerExitCleanup.stopAtExit(pid: process.pid)
            var strict: [TestChildProcess] = []
            for (port, version) in [(ports[7], "-tls1_3"), (ports[8], "-tls1_2")] {
                let server = try TestChildProcess(openssl, [
                    "s_server", "-accept", "127.0.0.1:\(port)", "-cert", pki.serverLeaf.path,
                    "-cert_chain", pki.intermediateCA.path, "-key", pki.directory.appendingPathComponent("server.key").path,
                    "-CAfile", pki.rootCA.path, "-Verify", "2", "-verify_return_error", "-www", "-quiet", version,
                ], output: prefix.appendingPathComponent("logs/s_server-\(port).log"), diesWithTests: true)
                TestServerExitCleanup.stopAtExit(pid: server.pid)
                strict.append(server)
            }
            let deadline = Date().addingTimeInterval(15)
            var ready = false
            while Date() < deadline, process.isRunning, strict.allSatisfy(\.isRunning) {
                if ports.allSatisfy(NginxServer.canConnect) { ready = true; break }
                usleep(20_000)
            }
            if ready { return NginxTLSServer(ports: ports, prefix: prefix) }
            process.stop(grace: 2)
            for server in strict { server.stop(grace: 1) }
            let errors = (try? String(contentsOf: prefix.appendingPathComponent("logs/error.log"), encoding: .utf8)) ?? ""
            let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            lastError = "nginx did not start: \(errors.suffix(1500)) \(output.suffix(500))"
        }
        throw FaultServerError(lastError)
    }

    /// Makes the PKI with the openssl command-line tool (P-256 keys throughout).
    private static func makePKI(_ pki: PKI, openssl: String) throws {
        let dir = pki.directory
        func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
        func ssl(_ arguments: [String]) throws { try NginxServer.run(openssl, arguments) }
        func key(_ name: String) throws {
            try ssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path(name)])
        }
        func request(_ keyName: String, subject: String, _ out: String) throws {
            try ssl(["req", "-new", "-key", path(keyName), "-subj", subject, "-out", path(out)])
        }
        func extensions(_ name: String, _ lines: [String]) throws {
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: dir.appendingPathComponent(name))
        }
        /// Issues `csr` with `issuer` for 7 days.
        func issue(_ csr: String, issuer: String, issuerKey: String, extensionsFile: String, _ out: String) throws {
            try ssl(["x509", "-req", "-in", path(csr), "-CA", path(issuer), "-CAkey", path(issuerKey), "-set_serial",
                     String(UInt32.random(in: 1000...UInt32.max)), "-days", "7", "-sha256",
                     "-extfile", path(extensionsFile), "-out", path(out)])
        }

        try extensions("ca.ext", ["basicConstraints=critical,CA:true", "keyUsage=critical,keyCertSign,cRLSign",
                                  "subjectKeyIdentifier=hash", "authorityKeyIdentifier=keyid:always"])
        try extensions("server.ext", ["basicConstraints=critical,CA:false", "keyUsage=critical,digitalSignature",
                                      "extendedKeyUsage=serverAuth", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
        try extensions("wrong-host.ext", ["basicConstraints=critical,CA:false", "keyUsage=critical,digitalSignature",
                                          "extendedKeyUsage=serverAuth", "subjectAltName=DNS:other.example"])
        try extensions("client.ext", ["basicConstraints=critical,CA:false", "keyUsage=critical,digitalSignature",
                                      "extendedKeyUsage=clientAuth"])

        // The root (self-signed) and the intermediate it issues.
        try key("root-ca.key")
        try ssl(["req", "-x509", "-new", "-key", path("root-ca.key"), "-subj", "/CN=Courier Test Root CA", "-days", "7",
                 "-sha256", "-addext", "basicConstraints=critical,CA:true", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                 "-out", path("root-ca.pem")])
        try key("intermediate-ca.key")
        try request("intermediate-ca.key", subject: "/CN=Courier Test Intermediate CA", "intermediate-ca.csr")
        try issue("intermediate-ca.csr", issuer: "root-ca.pem", issuerKey: "root-ca.key", extensionsFile: "ca.ext", "intermediate-ca.pem")

        // Server certificates from the intermediate.
        try key("server.key")
        try request("server.key", subject: "/CN=127.0.0.1", "server.csr")
        try issue("server.csr", issuer: "intermediate-ca.pem", issuerKey: "intermediate-ca.key", extensionsFile: "server.ext", "server.pem")
        let chain = try Data(contentsOf: pki.serverLeaf) + Data(contentsOf: pki.intermediateCA)
        try chain.write(to: pki.serverChain)
        try key("wrong-host.key")
        try request("wrong-host.key", subject: "/CN=other.example", "wrong-host.csr")
        try issue("wrong-host.csr", issuer: "intermediate-ca.pem", issuerKey: "intermediate-ca.key",
                  extensionsFile: "wrong-host.ext", "wrong-host.pem")
        // An expired one: `openssl ca` takes explicit start and end dates.
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("ca-db"), withIntermediateDirectories: true)
        try Data().write(to: dir.appendingPathComponent("ca-db/index.txt"))
        try Data("1000\n".utf8).write(to: dir.appendingPathComponent("ca-db/serial"))
        try extensions("ca.cnf", [
            "[ ca ]", "default_ca = test_ca",
            "[ test_ca ]", "database = \(path("ca-db/index.txt"))", "new_certs_dir = \(path("ca-db"))",
            "serial = \(path("ca-db/serial"))", "default_md = sha256", "policy = policy_any", "unique_subject = no",
            "copy_extensions = none",
            "[ policy_any ]", "commonName = supplied",
            "[ server_ext ]", "basicConstraints = critical,CA:false", "keyUsage = critical,digitalSignature",
            "extendedKeyUsage = serverAuth", "subjectAltName = IP:127.0.0.1,DNS:localhost",
        ])
        try ssl(["ca", "-batch", "-config", path("ca.cnf"), "-cert", path("intermediate-ca.pem"), "-keyfile", path("intermediate-ca.key"),
                 "-in", path("server.csr"), "-out", path("expired.pem"), "-startdate", "20200101000000Z",
                 "-enddate", "20200201000000Z", "-extensions", "server_ext", "-notext"])

        // The client certificate from the root, in every form a credential can name.
        try key("client.key")
        try request("client.key", subject: "/CN=Courier Client/O=Courier Tests", "client.csr")
        try issue("client.csr", issuer: "root-ca.pem", issuerKey: "root-ca.key", extensionsFile: "client.ext", "client.pem")
        try ssl(["pkey", "-in", path("client.key"), "-aes256", "-passout", "pass:\(PKI.clientKeyPassphrase)",
                 "-out", path("client-encrypted.key")])
        try (Data(contentsOf: pki.clientCertificate) + Data(contentsOf: pki.clientKey)).write(to: pki.clientCombined)
        try ssl(["pkcs12", "-export", "-in", path("client.pem"), "-inkey", path("client.key"), "-name", "Courier Client",
                 "-passout", "pass:\(PKI.clientKeyPassphrase)", "-out", path("client.p12")])

        // A client certificate from a CA nobody trusts.
        try key("stranger-ca.key")
        try ssl(["req", "-x509", "-new", "-key", path("stranger-ca.key"), "-subj", "/CN=Stranger CA", "-days", "7",
                 "-addext", "basicConstraints=critical,CA:true", "-out", path("stranger-ca.pem")])
        try key("stranger.key")
        try request("stranger.key", subject: "/CN=Stranger", "stranger.csr")
        try issue("stranger.csr", issuer: "stranger-ca.pem", issuerKey: "stranger-ca.key", extensionsFile: "client.ext", "stranger.pem")
    }

    private static func configuration(prefix: URL, ports: [Int]) -> String {
        let p = prefix.path
        let user = getuid() == 0 ? "user root;\n" : ""
        let common = """
                root \(p)/docroot;
                ssl_session_tickets off;
                ssl_session_cache off;
                add_header X-Client-DN "$ssl_client_s_dn" always;
                add_header X-Client-Verify "$ssl_client_verify" always;
                add_header X-TLS-Protocol "$ssl_protocol" always;
                location = /whoami {
                    default_type text/plain;
                    return 200 "dn=$ssl_client_s_dn\\nverify=$ssl_client_verify\\n";
                }
        """
        func server(_ port: Int, certificate: String, key: String, protocols: String = "TLSv1.2 TLSv1.3", extra: String = "") -> String {
            """
                server {
                    listen 127.0.0.1:\(port) ssl;
                    server_name courier-tls-\(port);
                    ssl_certificate \(p)/pki/\(certificate);
                    ssl_certificate_key \(p)/pki/\(key);
                    ssl_protocols \(protocols);
            \(extra)
            \(common)
                }

            """
        }
        let verify = """
                    ssl_client_certificate \(p)/pki/root-ca.pem;
                    ssl_verify_depth 2;
        """
        return """
        \(user)daemon off;
        master_process off;
        worker_processes 1;
        pid \(p)/nginx.pid;
        error_log \(p)/logs/error.log warn;
        events { worker_connections 256; }
        http {
            access_log \(p)/logs/access.log;
            client_body_temp_path \(p)/tmp/client_body;
            proxy_temp_path \(p)/tmp/proxy;
            fastcgi_temp_path \(p)/tmp/fastcgi;
            uwsgi_temp_path \(p)/tmp/uwsgi;
            scgi_temp_path \(p)/tmp/scgi;
            types { text/plain txt; }
            default_type application/octet-stream;
            keepalive_timeout 30s;
        \(server(ports[0], certificate: "server-chain.pem", key: "server.key"))
        \(server(ports[1], certificate: "wrong-host.pem", key: "wrong-host.key"))
        \(server(ports[2], certificate: "expired.pem", key: "server.key"))
        \(server(ports[3], certificate: "server-chain.pem", key: "server.key", extra: verify + "\n            ssl_verify_client on;"))
        \(server(ports[4], certificate: "server-chain.pem", key: "server.key", extra: verify + "\n            ssl_verify_client optional;"))
        \(server(ports[5], certificate: "server-chain.pem", key: "server.key", protocols: "TLSv1.2"))
        \(server(ports[6], certificate: "server-chain.pem", key: "server.key", protocols: "TLSv1.3"))
        }

        """
    }
}
