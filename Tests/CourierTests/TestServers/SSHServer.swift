import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A real SSH server for the sftp handler tests: OpenSSH's sshd on 127.0.0.1, started by the tests
/// themselves (once per test process, on first use) from a configuration written into a fresh
/// temporary directory, and stopped when the process exits.
///
/// It needs root (sshd checks passwords against the system's accounts) and the `courier-sftp`
/// account `scripts/setup` creates: an account without a shell whose password is locked. The
/// harness sets a random password for the run (``password``) and locks the account again at exit.
///
/// The server accepts passwords (`password` and `keyboard-interactive`, through PAM) and the
/// public keys in ``Keys`` except ``Keys/unauthorized``; host key ``hostKey`` (ed25519).
/// ``files`` holds the test files; ``url(_:)`` makes URLs for them.
final class SSHServer: @unchecked Sendable {
    static let user = "courier-sftp"

    /// The client keys `ssh-keygen` made for the run.
    struct Keys: Sendable {
        var ed25519: URL
        /// Encrypted with ``SSHServer/Keys/passphrase``.
        var ed25519Encrypted: URL
        var ecdsa: URL
        var rsa: URL
        /// Only the agent test uses it (added to its own agent).
        var agent: URL
        /// Not in authorized_keys.
        var unauthorized: URL
        static let passphrase = "courier passphrase"
    }

    /// The test files under ``files``.
    enum Files {
        static let hello = "hello.txt"
        static let helloContents = Data("Hello, SFTP!\n".utf8)
        /// 16 MiB of random bytes.
        static let big = "big.bin"
        static let bigSize = 16 << 20
        /// 1 MiB of random bytes.
        static let medium = "medium.bin"
        static let mediumSize = 1 << 20
        /// A directory: `a.txt`, `b.bin` (1000 bytes), `sub/`, `link` → `a.txt`.
        static let directory = "dir"
        static let aContents = Data("a file\n".utf8)
        /// Owned by root, mode 0600: the test user cannot read it.
        static let secret = "secret.txt"
        /// A directory the test user may write to.
        static let uploads = "uploads"
        /// A directory owned by root, mode 0755: the test user cannot write there.
        static let readOnly = "readonly"
        static let lines = "lines.txt"
        static let lineCount = 300
    }

    let port: Int
    /// The temporary directory holding configuration, keys, logs and files.
    let prefix: URL
    /// The directory holding the test files.
    let files: URL
    /// The test user's password for this run.
    let password: String
    /// The host key's public half, as in a `.pub` file (`ssh-ed25519 AAAA… comment`).
    let hostKey: String
    /// The host key's private file (for starting another server with the same key).
    let hostKeyFile: URL
    /// A known-hosts file listing ``hostKey`` for `[127.0.0.1]:port`.
    let knownHosts: URL
    let keys: Keys
    /// ``StreamHash`` of ``Files/big``.
    let bigHash: UInt64
    /// sshd's log (`-e`, LogLevel VERBOSE).
    let log: URL

    private init(port: Int, prefix: URL, password: String, hostKey: String, hostKeyFile: URL, keys: Keys, bigHash: UInt64) {
        self.port = port
        self.prefix = prefix
        files = prefix.appendingPathComponent("files", isDirectory: true)
        self.password = password
        self.hostKey = hostKey
        self.hostKeyFile = hostKeyFile
        knownHosts = prefix.appendingPathComponent("known_hosts")
        self.keys = keys
        self.bigHash = bigHash
        log = prefix.appendingPathComponent("sshd.log")
    }

    /// The environment variable holding the test account's password for this test process.
    static let passwordVariable = "COURIER_TEST_SFTP_PASSWORD"

    /// The test account's password for this run: random, made once per process. Every test target
    /// runs in the same process and each compiles its own copy of this file (the tool's tests link
    /// it too), so the first copy that needs the password puts it in the process's environment and
    /// the others take it from there; otherwise each would set its own and lock the other out.
    static func runPassword() -> String {
        if let existing = getenv(passwordVariable) { return String(cString: existing) }
        let made = "Courier-" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(20)
        setenv(passwordVariable, made, 0)
        return getenv(passwordVariable).map { String(cString: $0) } ?? made
    }

    /// `sftp://courier-sftp@127.0.0.1:<port><files>/<path>` (with the password when asked).
    func url(_ path: String, password: Bool = false, port: Int? = nil) -> URL {
        let credentials = password ? "\(Self.user):\(self.password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" : Self.user
        let encoded = (files.path + "/" + path).addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path
        return URL(string: "sftp://\(credentials)@127.0.0.1:\(port ?? self.port)\(encoded)")!
    }

    /// The bytes of a test file.
    func contents(of path: String) throws -> Data {
        try Data(contentsOf: files.appendingPathComponent(path))
    }

    /// How many logins sshd accepted so far (one per SSH connection).
    func acceptedLogins() -> Int {
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        // sshd -e ends lines with CRLF, one Character in Swift: split on newlines, not on "\n".
        return text.split(whereSeparator: \.isNewline).filter { $0.contains("Accepted ") && $0.contains(" for \(Self.user) from ") }.count
    }

    /// Whether sshd logged exactly `count` logins: waits (bounded) for the log to catch up, since
    /// sshd's monitor process writes the line a moment after the client is in.
    func waitForLogins(_ count: Int) async -> Bool {
        _ = await waitUntil(timeout: 3) { self.acceptedLogins() >= count }
        await settle(0.1)
        return acceptedLogins() == count
    }

    /// A known-hosts line for `key` (a `.pub` line) at `[127.0.0.1]:port`.
    static func knownHostsLine(port: Int, key: String) -> String {
        let parts = key.split(separator: " ")
        return "[127.0.0.1]:\(port) \(parts.prefix(2).joined(separator: " "))\n"
    }

    // MARK: The shared instance

    private static let launch = SharedServerLaunch<SSHServer>(name: "sshd") { (try start(), nil) }

    /// The process's sshd, started on first use (bounded: it fails within about a minute).
    static func shared() async throws -> SSHServer { try await launch.server() }

    // MARK: Starting

    static let sshd = "/usr/sbin/sshd"

    /// Runs a tool (bounded) and returns its output; throws when it fails.
    @discardableResult
    static func run(_ tool: String, _ arguments: [String]) throws -> String {
        let result = try TestChildProcess.run(tool, arguments)
        guard result.status == 0 else {
            throw FaultServerError("\(tool) \(arguments.joined(separator: " ")) exited with \(result.status): \(result.output)")
        }
        return result.output
    }

    static func tool(_ name: String) throws -> String {
        guard let path = ["/usr/bin/\(name)", "/usr/sbin/\(name)", "/bin/\(name)", "/sbin/\(name)"]
            .first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw FaultServerError("\(name) is not installed: run scripts/setup (apt-get install openssh-server openssh-client)")
        }
        return path
    }

    private static func start() throws -> SSHServer {
        guard FileManager.default.isExecutableFile(atPath: sshd) else {
            throw FaultServerError("no \(sshd): run scripts/setup (apt-get install openssh-server)")
        }
        guard getuid() == 0 else {
            throw FaultServerError("the sftp tests run sshd with password logins, which needs root")
        }
        guard let account = getpwnam(user) else {
            throw FaultServerError("the test account \(user) does not exist: run scripts/setup")
        }
        let uid = account.pointee.pw_uid, gid = account.pointee.pw_gid
        let keygenTool = try tool("ssh-keygen")
        let fileManager = FileManager.default
        let prefix = fileManager.temporaryDirectory.appendingPathComponent("courier-sshd-\(UUID().uuidString)", isDirectory: true)
        let files = prefix.appendingPathComponent("files", isDirectory: true)
        try fileManager.createDirectory(at: files, withIntermediateDirectories: true)
        // COURIER_KEEP_SSHD=1 keeps the directory (configuration, logs) for debugging.
        if ProcessInfo.processInfo.environment["COURIER_KEEP_SSHD"] == nil { TestServerExitCleanup.removeAtExit(prefix) }
        // sshd's privilege-separation directory (tmpfs: gone after a reboot).
        try? fileManager.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true,
                                         attributes: [.posixPermissions: 0o755])

        // Keys: the server's, and the clients'.
        func keygen(_ name: String, _ type: [String], passphrase: String = "") throws -> URL {
            let file = prefix.appendingPathComponent(name)
            try run(keygenTool, ["-q"] + type + ["-N", passphrase, "-C", name, "-f", file.path])
            return file
        }
        let hostKeyFile = try keygen("host_ed25519", ["-t", "ed25519"])
        let keys = Keys(ed25519: try keygen("id_ed25519", ["-t", "ed25519"]),
                        ed25519Encrypted: try keygen("id_ed25519_encrypted", ["-t", "ed25519"], passphrase: Keys.passphrase),
                        ecdsa: try keygen("id_ecdsa", ["-t", "ecdsa", "-b", "256"]),
                        rsa: try keygen("id_rsa", ["-t", "rsa", "-b", "3072"]),
                        agent: try keygen("id_agent", ["-t", "ed25519"]),
                        unauthorized: try keygen("id_unauthorized", ["-t", "ed25519"]))
        var authorized = ""
        for key in [keys.ed25519, keys.ed25519Encrypted, keys.ecdsa, keys.rsa, keys.agent] {
            authorized += try String(contentsOf: URL(fileURLWithPath: key.path + ".pub"), encoding: .utf8)
        }
        try Data(authorized.utf8).write(to: prefix.appendingPathComponent("authorized_keys"))
        let hostKey = try String(contentsOf: URL(fileURLWithPath: hostKeyFile.path + ".pub"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)

        // Files.
        func write(_ path: String, _ data: Data) throws { try data.write(to: files.appendingPathComponent(path)) }
        try write(Files.hello, Files.helloContents)
        let big = try randomBytes(Files.bigSize)
        try write(Files.big, big)
        try write(Files.medium, big.prefix(Files.mediumSize))
        try write(Files.lines, Data((1...Files.lineCount).map { "line \($0)\n" }.joined().utf8))
        let directory = files.appendingPathComponent(Files.directory, isDirectory: true)
        try fileManager.createDirectory(at: directory.appendingPathComponent("sub", isDirectory: true), withIntermediateDirectories: true)
        try Files.aContents.write(to: directory.appendingPathComponent("a.txt"))
        try Data(repeating: 7, count: 1000).write(to: directory.appendingPathComponent("b.bin"))
        try fileManager.createSymbolicLink(atPath: directory.appendingPathComponent("link").path, withDestinationPath: "a.txt")
        try write(Files.secret, Data("secret\n".utf8))
        chmod(files.appendingPathComponent(Files.secret).path, 0o600)
        try fileManager.createDirectory(at: files.appendingPathComponent(Files.readOnly, isDirectory: true), withIntermediateDirectories: true)
        let uploads = files.appendingPathComponent(Files.uploads, isDirectory: true)
        try fileManager.createDirectory(at: uploads, withIntermediateDirectories: true)
        chown(uploads.path, uid, gid)

        // The account's password for this run.
        let password = runPassword()
        let passwordFile = prefix.appendingPathComponent("chpasswd.in")
        try Data("\(user):\(password)\n".utf8).write(to: passwordFile)
        defer { try? FileManager.default.removeItem(at: passwordFile) }
        let changed = try TestChildProcess.run("/bin/sh", ["-c", "\(try tool("chpasswd")) < '\(passwordFile.path)'"])
        guard changed.status == 0 else { throw FaultServerError("chpasswd failed: \(changed.output)") }
        // The account's password is locked again when the tests end.
        TestServerExitCleanup.atExit { spawnAndWait(["/usr/sbin/usermod", "-L", user]) }

        let log = prefix.appendingPathComponent("sshd.log")
        var lastError = "sshd did not start"
        for _ in 0..<3 {
            let port = try freePort()
            let server = SSHServer(port: port, prefix: prefix, password: password, hostKey: hostKey, hostKeyFile: hostKeyFile,
                                   keys: keys, bigHash: StreamHash.of(big))
            do {
                let process = try launchSSHD(prefix: prefix, name: "main", port: port, hostKeyFile: hostKeyFile, log: log)
                try Data(knownHostsLine(port: port, key: hostKey).utf8).write(to: server.knownHosts)
                TestServerExitCleanup.stopAtExit(pid: process.pid)
                return server
            } catch {
                lastError = "\(error)"
            }
        }
        throw FaultServerError(lastError)
    }

    /// Starts `sshd -D -e -f <config>` for 127.0.0.1:`port` and waits (bounded) until it accepts
    /// connections. `extra` lines are added to the configuration.
    static func launchSSHD(prefix: URL, name: String, port: Int, hostKeyFile: URL, log: URL, extra: String = "") throws -> TestChildProcess {
        let config = prefix.appendingPathComponent("sshd_config_\(name)")
        let text = """
        ListenAddress 127.0.0.1:\(port)
        HostKey \(hostKeyFile.path)
        PidFile \(prefix.appendingPathComponent("sshd_\(name).pid").path)
        AuthorizedKeysFile \(prefix.appendingPathComponent("authorized_keys").path)
        StrictModes no
        UsePAM yes
        PermitRootLogin no
        AllowUsers \(user)
        Subsystem sftp internal-sftp
        LogLevel VERBOSE
        MaxSessions 20
        MaxStartups 100:30:200
        MaxAuthTries 20
        LoginGraceTime 30
        UseDNS no
        \(extra)

        """
        try Data(text.utf8).write(to: config)
        let process = try TestChildProcess(sshd, ["-D", "-e", "-f", config.path], output: log, diesWithTests: true)
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline, process.isRunning {
            if NginxServer.canConnect(port) { return process }
            usleep(20_000)
        }
        process.stop(grace: 1)
        let text2 = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        throw FaultServerError("sshd (\(name)) did not start on port \(port): \(text2.suffix(1500))")
    }

    /// Another sshd (same users, keys and files) on `port` (a free one when nil) with `hostKeyFile`;
    /// the caller stops it.
    func launchInstance(name: String, hostKeyFile: URL, port: Int? = nil, extra: String = "") throws -> SSHServerInstance {
        let chosen = try port ?? Self.freePort()
        let process = try Self.launchSSHD(prefix: prefix, name: name, port: chosen, hostKeyFile: hostKeyFile,
                                          log: prefix.appendingPathComponent("sshd_\(name).log"), extra: extra)
        TestServerExitCleanup.stopAtExit(pid: process.pid)
        return SSHServerInstance(process: process, port: chosen)
    }

    /// A new host key (`type`: `ed25519`, `ecdsa` (P-256) or `rsa`) in the server's directory: the
    /// private file and the `.pub` line.
    func makeHostKey(_ name: String, type: String = "ed25519") throws -> (file: URL, publicKey: String) {
        let file = prefix.appendingPathComponent(name)
        try? FileManager.default.removeItem(at: file)
        try? FileManager.default.removeItem(atPath: file.path + ".pub")
        let size = type == "ecdsa" ? ["-b", "256"] : type == "rsa" ? ["-b", "2048"] : []
        try Self.run(try Self.tool("ssh-keygen"), ["-q", "-t", type] + size + ["-N", "", "-C", name, "-f", file.path])
        let publicKey = try String(contentsOf: URL(fileURLWithPath: file.path + ".pub"), encoding: .utf8)
        return (file, publicKey.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    // MARK: Helpers

    /// A port that was free on 127.0.0.1 a moment ago.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw FaultServerError("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard ok else { throw FaultServerError("could not find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
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

    // MARK: Stopping at exit

    /// Runs a program without Foundation (safe in an exit handler), waiting at most 5 s.
    fileprivate static func spawnAndWait(_ arguments: [String]) {
        guard let path = arguments.first, FileManager.default.isExecutableFile(atPath: path) else { return }
        var pid: pid_t = 0
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        guard posix_spawn(&pid, path, nil, nil, &argv, environ) == 0 else { return }
        var status: Int32 = 0
        for _ in 0..<500 {
            if waitpid(pid, &status, WNOHANG) == pid { return }
            usleep(10_000)
        }
        kill(pid, SIGKILL)
    }
}

/// An extra sshd a test started; ``stop()`` ends it (and it dies with the test process anyway).
final class SSHServerInstance: @unchecked Sendable {
    let process: TestChildProcess
    let port: Int

    init(process: TestChildProcess, port: Int) {
        self.process = process
        self.port = port
    }

    /// Stops the listener (sessions it already forked end with their connections).
    func stop() {
        guard process.isRunning else { return }
        process.stop()
        // Wait until the port is free again, so a restart on it can bind.
        let free = Date().addingTimeInterval(5)
        while NginxServer.canConnect(port), Date() < free { usleep(10_000) }
    }
}
