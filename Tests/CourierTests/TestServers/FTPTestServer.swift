import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Real FTP servers for the ftp/ftps handler tests: `ftp_server.py` (pyftpdlib, next to this file)
/// on 127.0.0.1, started by the tests themselves (once per test process, on first use) over a
/// document root in a fresh temporary directory, and stopped when the process exits.
///
/// One Python process serves every ``Kind`` on its own ephemeral port (``port(_:)``):
/// - ``Kind/standard``: pyftpdlib's defaults: EPSV, PASV, active mode (PORT/EPRT), MLSD/MLST, REST,
///   SIZE, MDTM; `150` before every transfer.
/// - ``Kind/quirks``: `125` instead of `150` before every transfer; EPSV, MLSD and MLST answer `500`
///   and are not in FEAT; multi-line `220` greeting and `230` login reply.
/// - ``Kind/drop``: like standard, but every RETR data connection is closed after ``dropAfter``
///   bytes (then `426` on the control connection); listings and small files work.
/// - ``Kind/tls``: explicit FTPS (`ftp://` with AUTH TLS); TLS is required on the control and data
///   connections, so a plain login gets `550`.
/// - ``Kind/implicit``: implicit FTPS (`ftps://`, TLS from the first byte).
/// - ``Kind/listings``: like standard, but `MLSD` of ``Files/endlessListing`` never ends (entries
///   with 4000-byte names), and `MLSD` of ``Files/stalledListing`` sends
///   ``Files/stalledListingEarlyEntries`` entries, then nothing for a minute, then as many again.
/// - ``Kind/eager``: like standard without EPSV (`500`), but it answers `PASV` before it is asked:
///   right after each transfer's `226` it sends the next `227`, and the `PASV` that follows gets no
///   reply of its own. A client reusing the control connection finds the `227` waiting the moment
///   it has sent `PASV`, as from a very fast server (``CurlFTPDoPhaseNudge``'s stall, every time).
///
/// Every kind serves the same ``root`` (``Files``) to ``user``/``password`` (read and write,
/// including making directories) and to anonymous users (read only). Uploads land in ``root``:
/// use ``uploadPath(_:)`` for a fresh name. The TLS certificate (``certificatePEM``) is
/// self-signed, for IP 127.0.0.1 and DNS localhost.
///
/// Needs python3 with pyftpdlib and pyOpenSSL (`scripts/setup` installs them from
/// `scripts/requirements-test.txt`) and openssl.
final class FTPTestServer: @unchecked Sendable {
    enum Kind: String, CaseIterable, Sendable {
        case standard, quirks, drop, tls, implicit, listings, eager
    }

    /// The files in ``root`` (paths from the FTP root, not percent-encoded).
    enum Files {
        static let hello = "/hello.txt"
        static let helloContents = Data("Hello, Courier!\n".utf8)
        /// 4 MiB of random bytes.
        static let medium = "/medium.bin"
        static let mediumSize = 4 << 20
        /// 64 MiB of random bytes (``FTPTestServer/bigHash``).
        static let big = "/big.bin"
        static let bigSize = 64 << 20
        /// A directory: `a.txt`, `sub/` (holding `b.txt`), `name with spaces.txt` and `link`
        /// (a symbolic link to `a.txt`).
        static let dir = "/dir/"
        static let dirEntries = ["a.txt", "link", "name with spaces.txt", "sub"]
        static let a = "/dir/a.txt"
        static let aContents = Data("File A\n".utf8)
        static let sub = "/dir/sub/"
        static let b = "/dir/sub/b.txt"
        static let bContents = Data("File B\n".utf8)
        static let spaces = "/dir/name with spaces.txt"
        static let spacesContents = Data("A name with spaces.\n".utf8)
        static let link = "/dir/link"
        /// An empty directory for uploads (anything under ``root`` can be written, though).
        static let upload = "/upload/"
        /// An empty directory, whose listing never ends on the ``Kind/listings`` server.
        static let endlessListing = "/listings/endless/"
        /// An empty directory, whose listing stalls after its first entries on the ``Kind/listings`` server.
        static let stalledListing = "/listings/stalled/"
        /// How many entries the stalled listing sends before it stalls (named `early-0`, `early-1`, …).
        static let stalledListingEarlyEntries = 100
    }

    static let user = "courier"
    static let password = "open sesame"
    /// How many bytes of a RETR the ``Kind/drop`` server sends before it closes the data connection.
    static let dropAfter = 1 << 20

    /// The temporary directory holding the root, certificate and log.
    let prefix: URL
    /// The directory every server serves, to check uploads and prepare files.
    let root: URL
    /// The server certificate (PEM), self-signed, for IP 127.0.0.1 and DNS localhost.
    let certificatePEM: URL
    /// The servers' log (pyftpdlib, one line per login and transfer).
    let log: URL
    /// ``StreamHash`` of ``Files/big``.
    let bigHash: UInt64
    private let ports: [Kind: Int]

    private init(prefix: URL, ports: [Kind: Int], certificatePEM: URL, bigHash: UInt64) {
        self.prefix = prefix
        root = prefix.appendingPathComponent("root", isDirectory: true)
        log = prefix.appendingPathComponent("ftp.log")
        self.certificatePEM = certificatePEM
        self.ports = ports
        self.bigHash = bigHash
    }

    /// The port of one server.
    func port(_ kind: Kind) -> Int { ports[kind]! }

    /// `ftp://[user[:password]@]127.0.0.1:<port>/<path>` (`ftps://` for ``Kind/implicit``). `path` is
    /// plain text (spaces and all); it is percent-encoded here, like the user and password. Build the
    /// URL by hand to test other encodings.
    func url(_ path: String, server: Kind = .standard, user: String? = nil, password: String? = nil) -> URL {
        var components = URLComponents()
        components.scheme = server == .implicit ? "ftps" : "ftp"
        components.host = "127.0.0.1"
        components.port = port(server)
        components.percentEncodedUser = user.map(Self.encodeUserInfo)
        components.percentEncodedPassword = password.map(Self.encodeUserInfo)
        components.path = path.hasPrefix("/") ? path : "/" + path
        return components.url!
    }

    /// `text` percent-encoded for a URL's user or password: everything but unreserved characters and
    /// sub-delimiters (so `:`, `@`, `/` and `%` are encoded).
    private static func encodeUserInfo(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn:
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;="))!
    }

    /// An implicit-FTPS URL: `ftps://…` on the ``Kind/implicit`` server. (The ``Kind/tls`` server is
    /// explicit FTPS: `url(path, server: .tls)`, with TLS required by the client.)
    func ftpsURL(_ path: String, user: String? = nil, password: String? = nil) -> URL {
        url(path, server: .implicit, user: user, password: password)
    }

    /// ``url(_:server:user:password:)`` logged in as ``user``.
    func userURL(_ path: String, server: Kind = .standard) -> URL {
        url(path, server: server, user: Self.user, password: Self.password)
    }

    /// A path under ``Files/upload`` that nothing has used: `/upload/<unique>-<name>`.
    func uploadPath(_ name: String = "file.bin") -> String {
        "\(Files.upload)\(UUID().uuidString)-\(name)"
    }

    /// The file at `path` (from the FTP root) on disk.
    func fileURL(_ path: String) -> URL {
        root.appendingPathComponent(String(path.drop { $0 == "/" }))
    }

    /// The bytes of a file under ``root``.
    func contents(of path: String) throws -> Data { try Data(contentsOf: fileURL(path)) }

    // MARK: The shared instance

    private static let launch = SharedServerLaunch<FTPTestServer>(name: "the FTP test servers") {
        let (server, process) = try start()
        return (server, process)
    }

    /// The process's FTP servers, started on first use (bounded: it fails within about a minute).
    static func shared() async throws -> FTPTestServer { try await launch.server() }

    // MARK: Starting

    /// `ftp_server.py`, next to this source file.
    private static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("ftp_server.py")

    private static func start() throws -> (FTPTestServer, Process) {
        guard FileManager.default.fileExists(atPath: script.path) else {
            throw FaultServerError("\(script.path) is missing")
        }
        let pythons = pythonCandidates()
        guard !pythons.isEmpty else {
            throw FaultServerError("no python3 on PATH: run scripts/setup")
        }
        let fileManager = FileManager.default
        let prefix = fileManager.temporaryDirectory.appendingPathComponent("courier-ftp-\(UUID().uuidString)", isDirectory: true)
        let root = prefix.appendingPathComponent("root", isDirectory: true)
        for directory in ["root/dir/sub", "root/upload", "root/listings/endless", "root/listings/stalled", "tls"] {
            try fileManager.createDirectory(at: prefix.appendingPathComponent(directory, isDirectory: true), withIntermediateDirectories: true)
        }
        TestServerExitCleanup.removeAtExit(prefix)

        func write(_ path: String, _ data: Data) throws { try data.write(to: root.appendingPathComponent(String(path.dropFirst()))) }
        try write(Files.hello, Files.helloContents)
        try write(Files.a, Files.aContents)
        try write(Files.b, Files.bContents)
        try write(Files.spaces, Files.spacesContents)
        try fileManager.createSymbolicLink(atPath: root.appendingPathComponent(String(Files.link.dropFirst())).path, withDestinationPath: "a.txt")
        _ = try writeRandomFile(root.appendingPathComponent(String(Files.medium.dropFirst())), size: Files.mediumSize)
        let bigHash = try writeRandomFile(root.appendingPathComponent(String(Files.big.dropFirst())), size: Files.bigSize)

        var failures: [String] = []
        for python in pythons {
            switch try launch(python: python, prefix: prefix) {
            case .started(let ports, let certificate, let process):
                return (FTPTestServer(prefix: prefix, ports: ports, certificatePEM: certificate, bigHash: bigHash), process)
            case .missingModules(let message):
                failures.append("\(python): \(message)")
            case .failed(let message):
                throw FaultServerError(message)
            }
        }
        throw FaultServerError("pyftpdlib and pyOpenSSL are not installed for any python3 (run scripts/setup): "
                               + failures.joined(separator: "; "))
    }

    private enum LaunchOutcome {
        case started([Kind: Int], URL, Process)
        /// The script exited with status 3: this python lacks pyftpdlib or pyOpenSSL.
        case missingModules(String)
        case failed(String)
    }

    /// Runs the script with `python` and waits (bounded) for the line that gives its ports.
    private static func launch(python: String, prefix: URL) throws -> LaunchOutcome {
        let output = prefix.appendingPathComponent("ports.json"), log = prefix.appendingPathComponent("ftp.log")
        try Data().write(to: output)
        try Data().write(to: log)
        let outputHandle = try FileHandle(forWritingTo: output), logHandle = try FileHandle(forWritingTo: log)
        defer { try? outputHandle.close(); try? logHandle.close() }
        // Its stdin is a pipe whose write end only this process holds: when this process ends,
        // however it ends, the script reads end-of-file and exits.
        let stdin = Pipe()
        let process = Process()
        var arguments = [python, script.path, "--root", prefix.appendingPathComponent("root").path,
                         "--cert-dir", prefix.appendingPathComponent("tls").path, "--drop-after", "\(dropAfter)"]
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            arguments = ["--pdeathsig", "KILL", "--"] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: python)
            arguments.removeFirst()
        }
        process.arguments = arguments
        process.standardInput = stdin
        process.standardOutput = outputHandle
        process.standardError = logHandle
        try process.run()
        let input = stdin.fileHandleForWriting
        TestServerExitCleanup.atExit { try? input.close() }
        TestServerExitCleanup.stopAtExit(pid: process.processIdentifier)

        let deadline = Date().addingTimeInterval(30)
        var line: Data?
        while Date() < deadline {
            let text = (try? Data(contentsOf: output)) ?? Data()
            if let end = text.firstIndex(of: UInt8(ascii: "\n")) { line = text[..<end]; break }
            if !process.isRunning { break }
            usleep(20_000)
        }
        let logText = { String(decoding: ((try? Data(contentsOf: log)) ?? Data()).suffix(2000), as: UTF8.self) }
        guard let line else {
            if process.isRunning {
                process.terminate()
                waitForExit(process, seconds: 5)
                return .failed("ftp_server.py did not report its ports within 30 s: \(logText())")
            }
            if process.terminationStatus == 3 { return .missingModules(logText()) }
            return .failed("ftp_server.py exited with status \(process.terminationStatus): \(logText())")
        }
        guard let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any],
              let portNumbers = object["ports"] as? [String: Int], let certificate = object["cert"] as? String else {
            process.terminate()
            return .failed("ftp_server.py printed an unexpected line: \(String(decoding: line, as: UTF8.self))")
        }
        var ports: [Kind: Int] = [:]
        for kind in Kind.allCases {
            guard let port = portNumbers[kind.rawValue], NginxServer.canConnect(port) else {
                process.terminate()
                return .failed("the \(kind.rawValue) FTP server is not listening: \(logText())")
            }
            ports[kind] = port
        }
        return .started(ports, URL(fileURLWithPath: certificate), process)
    }

    // MARK: Helpers

    /// A port on 127.0.0.1 that nothing listens on (a moment ago), for refused connections.
    static func unusedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw FaultServerError("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw FaultServerError("could not find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// The python3 executables to try: those on PATH, then the system's.
    static func pythonCandidates() -> [String] {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        var candidates: [String] = []
        for directory in path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/local/bin"] {
            let candidate = URL(fileURLWithPath: directory).appendingPathComponent("python3").path
            let resolved = URL(fileURLWithPath: candidate).resolvingSymlinksInPath().path
            if FileManager.default.isExecutableFile(atPath: candidate), !candidates.contains(candidate),
               !candidates.contains(where: { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path == resolved }) {
                candidates.append(candidate)
            }
        }
        return candidates
    }

    /// Writes `size` random bytes to `url` in pieces and returns their ``StreamHash``.
    private static func writeRandomFile(_ url: URL, size: Int) throws -> UInt64 {
        guard let random = FileHandle(forReadingAtPath: "/dev/urandom") else { throw FaultServerError("no /dev/urandom") }
        defer { try? random.close() }
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw FaultServerError("could not create \(url.path)")
        }
        let file = try FileHandle(forWritingTo: url)
        defer { try? file.close() }
        var hash = StreamHash()
        var written = 0
        while written < size {
            guard let piece = try random.read(upToCount: min(size - written, 8 << 20)), !piece.isEmpty else {
                throw FaultServerError("/dev/urandom ran dry")
            }
            hash.update(piece)
            try file.write(contentsOf: piece)
            written += piece.count
        }
        return hash.finalValue
    }

    @discardableResult
    private static func waitForExit(_ process: Process, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning {
            if Date() >= deadline {
                kill(process.processIdentifier, SIGKILL)
                return false
            }
            usleep(5_000)
        }
        return true
    }
}
