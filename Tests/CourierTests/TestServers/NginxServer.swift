import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A real web server for the http/https handler tests: nginx on 127.0.0.1, started by the tests
/// themselves (once per test process, on first use) from a configuration written into a fresh
/// temporary directory, and stopped when the process exits.
///
/// It serves, on ephemeral ports:
/// - ``httpPort``: plain HTTP/1.1;
/// - ``httpsPort``: HTTPS with HTTP/2 (ALPN), a self-signed certificate for 127.0.0.1 and localhost
///   (``certificatePEM``);
/// - ``otherOriginPort``: a second plain-HTTP server, a different origin for cross-origin redirects.
///
/// Both main ports serve the same locations: generated static files (``Files``; gzip, ranges, ETag and
/// Last-Modified come with nginx), `/echo` (proxied to an in-process ``FaultServer`` echo, so it
/// reports the method, headers and body nginx received), `/headers`, `/cookies/set?name=&value=`,
/// `/cookies/show`, `/status/NNN`, `/redirect/NNN` (to `/echo`), `/redirect/cross` and
/// `/redirect/cross307` (to the other origin), `/hops/N` (a chain of N redirects ending at
/// `/hops/0`), `/protected/` (HTTP Basic, ``basicUser``/``basicPassword``), `/slow/…` (static files at
/// 4 MiB/s) and `/norange/…` (static files with ranges disabled).
final class NginxServer: @unchecked Sendable {
    /// The files in the document root.
    enum Files {
        static let hello = "/hello.txt"
        static let helloContents = Data("Hello, Courier!\n".utf8)
        static let json = "/data.json"
        static let jsonContents = Data(#"{"name":"Courier","items":[1,2,3],"nested":{"ok":true}}"#.utf8)
        /// 64 MiB of random bytes.
        static let big = "/big.bin"
        static let bigSize = 64 << 20
        /// 4 MiB of random bytes.
        static let medium = "/medium.bin"
        static let mediumSize = 4 << 20
        /// 500 numbered lines ("line 1" … "line 500").
        static let lines = "/lines.txt"
        static let lineCount = 500
        /// 200 KB of compressible text (served gzip-encoded when asked).
        static let text = "/compressible.txt"
        static let protected = "/protected/secret.txt"
        static let protectedContents = Data("the secret\n".utf8)
    }

    static let basicUser = "courier"
    static let basicPassword = "open sesame"
    static let basicRealm = "Courier Test"

    let httpPort: Int
    let httpsPort: Int
    let otherOriginPort: Int
    /// The temporary directory holding configuration, logs, certificate and document root.
    let prefix: URL
    let docroot: URL
    /// The server certificate (PEM), self-signed, for IP 127.0.0.1 and DNS localhost.
    let certificatePEM: URL
    /// The upstream of `/echo`.
    let echo: FaultServer
    /// ``StreamHash`` of ``Files/big``.
    let bigHash: UInt64

    private init(httpPort: Int, httpsPort: Int, otherOriginPort: Int, prefix: URL, echo: FaultServer, bigHash: UInt64) {
        self.httpPort = httpPort
        self.httpsPort = httpsPort
        self.otherOriginPort = otherOriginPort
        self.prefix = prefix
        docroot = prefix.appendingPathComponent("docroot", isDirectory: true)
        certificatePEM = prefix.appendingPathComponent("cert.pem")
        self.echo = echo
        self.bigHash = bigHash
    }

    /// `http://127.0.0.1:<httpPort><path>`.
    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(httpPort)\(path)")! }
    /// `https://127.0.0.1:<httpsPort><path>`.
    func httpsURL(_ path: String) -> URL { URL(string: "https://127.0.0.1:\(httpsPort)\(path)")! }
    /// `http://127.0.0.1:<otherOriginPort><path>`.
    func otherOriginURL(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(otherOriginPort)\(path)")! }

    /// The bytes of a file in the document root.
    func contents(of path: String) throws -> Data {
        try Data(contentsOf: docroot.appendingPathComponent(String(path.dropFirst())))
    }

    // MARK: The shared instance

    private static let launch = SharedServerLaunch<NginxServer>(name: "nginx") {
        let (server, process) = try start()
        return (server, process)
    }

    /// The process's nginx, started on first use (bounded: it fails within about a minute).
    static func shared() async throws -> NginxServer { try await launch.server() }

    // MARK: Starting

    private static func start() throws -> (NginxServer, Process) {
        guard let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx"]
            .first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw FaultServerError("no nginx binary: run scripts/setup (apt-get install nginx)")
        }
        guard let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw FaultServerError("no openssl binary: run scripts/setup (apt-get install openssl)")
        }
        let prefix = FileManager.default.temporaryDirectory.appendingPathComponent("courier-nginx-\(UUID().uuidString)", isDirectory: true)
        let fileManager = FileManager.default
        for directory in ["docroot/protected", "logs", "tmp"] {
            try fileManager.createDirectory(at: prefix.appendingPathComponent(directory, isDirectory: true), withIntermediateDirectories: true)
        }
        TestServerExitCleanup.removeAtExit(prefix)
        let docroot = prefix.appendingPathComponent("docroot", isDirectory: true)
        func write(_ path: String, _ data: Data) throws { try data.write(to: docroot.appendingPathComponent(String(path.dropFirst()))) }
        try write(Files.hello, Files.helloContents)
        try write(Files.json, Files.jsonContents)
        try write(Files.protected, Files.protectedContents)
        try write(Files.lines, Data((1...Files.lineCount).map { "line \($0)\n" }.joined().utf8))
        try write(Files.text, Data(String(repeating: "Courier compresses this line of text very well. 0123456789\n", count: 3400).utf8))
        try write(Files.medium, randomBytes(Files.mediumSize))
        let big = try randomBytes(Files.bigSize)
        try write(Files.big, big)
        let bigHash = StreamHash.of(big)

        // A self-signed certificate for 127.0.0.1 and localhost, and an htpasswd file.
        try run(openssl, ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                          "-keyout", prefix.appendingPathComponent("key.pem").path,
                          "-out", prefix.appendingPathComponent("cert.pem").path,
                          "-days", "7", "-subj", "/CN=localhost",
                          "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
        let hash = try run(openssl, ["passwd", "-apr1", basicPassword]).trimmingCharacters(in: .whitespacesAndNewlines)
        try Data("\(basicUser):\(hash)\n".utf8).write(to: prefix.appendingPathComponent("htpasswd"))

        let echo = try FaultServer(fallback: .echo)
        var lastError = "nginx did not start"
        // A port picked as free can be taken before nginx binds it: try a few sets.
        for _ in 0..<3 {
            let ports = try freePorts(3)
            let config = configuration(prefix: prefix, http: ports[0], https: ports[1], other: ports[2], echoPort: echo.port)
            let configFile = prefix.appendingPathComponent("nginx.conf")
            try Data(config.utf8).write(to: configFile)
            let process = Process()
            var arguments = [nginx, "-p", prefix.path, "-c", configFile.path, "-e", prefix.appendingPathComponent("logs/error.log").path]
            if FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") {
                process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
                arguments = ["--pdeathsig", "KILL", "--"] + arguments
            } else {
                process.executableURL = URL(fileURLWithPath: nginx)
                arguments.removeFirst()
            }
            process.arguments = arguments
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            TestServerExitCleanup.stopAtExit(pid: process.processIdentifier)
            let deadline = Date().addingTimeInterval(15)
            var ready = false
            while Date() < deadline, process.isRunning {
                if ports.allSatisfy(canConnect) { ready = true; break }
                usleep(20_000)
            }
            if ready {
                let server = NginxServer(httpPort: ports[0], httpsPort: ports[1], otherOriginPort: ports[2], prefix: prefix,
                                         echo: echo, bigHash: bigHash)
                return (server, process)
            }
            if process.isRunning {
                process.terminate()
                waitForExit(process, seconds: 5)
            }
            let log = (try? String(contentsOf: prefix.appendingPathComponent("logs/error.log"), encoding: .utf8)) ?? ""
            lastError = "nginx did not start: \(log.suffix(2000))"
        }
        echo.stop()
        throw FaultServerError(lastError)
    }

    private static func configuration(prefix: URL, http: Int, https: Int, other: Int, echoPort: Int) -> String {
        let p = prefix.path
        let user = getuid() == 0 ? "user root;\n" : ""
        let echoLocation = """
                location = /echo {
                    proxy_pass http://echo_upstream;
                    proxy_http_version 1.1;
                    proxy_set_header Connection "";
                    proxy_set_header Host $http_host;
                    proxy_request_buffering off;
                    proxy_buffering off;
                }
        """
        var hops = ""
        for hop in 1...20 { hops += "        location = /hops/\(hop) { return 302 /hops/\(hop - 1); }\n" }
        return """
        \(user)daemon off;
        master_process off;
        worker_processes 1;
        pid \(p)/nginx.pid;
        error_log \(p)/logs/error.log warn;
        events { worker_connections 512; }
        http {
            access_log \(p)/logs/access.log;
            client_body_temp_path \(p)/tmp/client_body;
            proxy_temp_path \(p)/tmp/proxy;
            fastcgi_temp_path \(p)/tmp/fastcgi;
            uwsgi_temp_path \(p)/tmp/uwsgi;
            scgi_temp_path \(p)/tmp/scgi;
            types {
                text/plain txt;
                text/html html;
                application/json json;
                application/octet-stream bin;
            }
            default_type application/octet-stream;
            charset utf-8;
            charset_types text/plain text/html;
            sendfile on;
            tcp_nodelay on;
            keepalive_timeout 60s;
            keepalive_requests 10000;
            client_max_body_size 0;
            gzip on;
            gzip_types text/plain application/json;
            gzip_min_length 64;
            gzip_proxied any;
            gzip_vary on;
            upstream echo_upstream {
                server 127.0.0.1:\(echoPort);
                keepalive 8;
            }
            server {
                listen 127.0.0.1:\(http);
                listen 127.0.0.1:\(https) ssl http2;
                server_name courier-test;
                ssl_certificate \(p)/cert.pem;
                ssl_certificate_key \(p)/key.pem;
                ssl_protocols TLSv1.2 TLSv1.3;
                root \(p)/docroot;
        \(echoLocation)
                location = /headers {
                    default_type text/plain;
                    return 200 "method=$request_method\\nauthorization=$http_authorization\\ncookie=$http_cookie\\n";
                }
                location = /cookies/set {
                    add_header Set-Cookie "$arg_name=$arg_value; Path=/" always;
                    default_type text/plain;
                    return 200 "set $arg_name\\n";
                }
                location = /cookies/show {
                    default_type text/plain;
                    return 200 "$http_cookie";
                }
                location = /status/204 { return 204; }
                location = /status/404 { default_type text/plain; return 404 "not here\\n"; }
                location = /status/500 { default_type text/plain; return 500 "broken\\n"; }
                location = /status/418 { default_type text/plain; return 418 "teapot\\n"; }
                location = /redirect/301 { return 301 /echo; }
                location = /redirect/302 { return 302 /echo; }
                location = /redirect/303 { return 303 /echo; }
                location = /redirect/307 { return 307 /echo; }
                location = /redirect/308 { return 308 /echo; }
                location = /redirect/hello { return 302 /hello.txt; }
                location = /redirect/cross { return 302 http://127.0.0.1:\(other)/echo; }
                location = /redirect/cross307 { return 307 http://127.0.0.1:\(other)/echo; }
        \(hops)
                location = /hops/0 { default_type text/plain; return 200 "arrived\\n"; }
                location /protected/ {
                    auth_basic "\(basicRealm)";
                    auth_basic_user_file \(p)/htpasswd;
                }
                location /slow/ {
                    alias \(p)/docroot/;
                    limit_rate 4m;
                }
                location /norange/ {
                    alias \(p)/docroot/;
                    max_ranges 0;
                }
            }
            server {
                listen 127.0.0.1:\(other);
                server_name courier-other;
                root \(p)/docroot;
        \(echoLocation)
            }
        }

        """
    }

    // MARK: Helpers

    /// `count` distinct ports that were free on 127.0.0.1 a moment ago.
    static func freePorts(_ count: Int) throws -> [Int] {
        var sockets: [Int32] = []
        defer { for fd in sockets { close(fd) } }
        var ports: [Int] = []
        for _ in 0..<count {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw FaultServerError("socket() failed") }
            sockets.append(fd)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let ok = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
                }
            }
            guard ok else { throw FaultServerError("could not find a free port") }
            ports.append(Int(UInt16(bigEndian: address.sin_port)))
        }
        return ports
    }

    /// Whether something accepts connections on 127.0.0.1:`port`.
    static func canConnect(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    private static func randomBytes(_ count: Int) throws -> Data {
        guard let handle = FileHandle(forReadingAtPath: "/dev/urandom") else { throw FaultServerError("no /dev/urandom") }
        defer { try? handle.close() }
        var data = Data()
        data.reserveCapacity(count)
        while data.count < count {
            guard let piece = try handle.read(upToCount: min(count - data.count, 8 << 20)), !piece.isEmpty else {
                throw FaultServerError("/dev/urandom ran dry")
            }
            data.append(piece)
        }
        return data
    }

    /// Runs `tool` with `arguments` (bounded to 30 s) and returns its standard output.
    @discardableResult
    static func run(_ tool: String, _ arguments: [String], input: Data? = nil) throws -> String {
        String(decoding: try runForData(tool, arguments, input: input), as: UTF8.self)
    }

    /// Runs `tool` with `arguments` (bounded to 30 s) and returns its standard output's bytes.
    static func runForData(_ tool: String, _ arguments: [String], input: Data? = nil) throws -> Data {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Files rather than pipes: nothing can block on a full pipe.
        let inFile = directory.appendingPathComponent("in"), outFile = directory.appendingPathComponent("out"),
            errFile = directory.appendingPathComponent("err")
        try (input ?? Data()).write(to: inFile)
        try Data().write(to: outFile)
        try Data().write(to: errFile)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let handles = [try FileHandle(forReadingFrom: inFile), try FileHandle(forWritingTo: outFile), try FileHandle(forWritingTo: errFile)]
        defer { for handle in handles { try? handle.close() } }
        process.standardInput = handles[0]
        process.standardOutput = handles[1]
        process.standardError = handles[2]
        try process.run()
        guard waitForExit(process, seconds: 30) else {
            throw FaultServerError("\(tool) \(arguments.joined(separator: " ")) did not finish in 30 s")
        }
        guard process.terminationStatus == 0 else {
            let message = (try? String(contentsOf: errFile, encoding: .utf8)) ?? ""
            throw FaultServerError("\(tool) \(arguments.first ?? "") exited with \(process.terminationStatus): \(message)")
        }
        return try Data(contentsOf: outFile)
    }

    @discardableResult
    private static func waitForExit(_ process: Process, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning {
            if Date() >= deadline {
                process.terminate()
                return false
            }
            usleep(5_000)
        }
        return true
    }
}
