import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// OpenSSH's sshd on 127.0.0.1 for the bridge tests, started once per test process: a smaller
/// cousin of `Tests/CourierTests/TestServers/SSHServer.swift` (same account, same kind of
/// configuration) that logs in with a key only. It never touches the account's password, so it
/// runs beside that server in one test process (all test targets share one) without disturbing it.
///
/// Needs root (sshd changes to the test user) and the `courier-sftp` account `scripts/setup`
/// creates. sshd is killed when the test process ends (``TestProcess/startTied(_:log:)``).
final class BridgeSSHServer: Sendable {
    static let user = "courier-sftp"

    /// `hello.txt`'s contents; `big.bin` holds ``bigSize`` bytes; `uploads/` is the test user's.
    static let hello = Data("Hello over SFTP, through FoundationNetworking\n".utf8)
    /// `big.bin`'s size: many chunks on the way.
    static let bigSize = 4 << 20

    let port: Int
    /// The directory holding the test files.
    let files: URL
    /// The client's private key (ed25519, no passphrase), the only way in.
    let clientKey: URL
    /// A known-hosts file listing the server's key for `[127.0.0.1]:port`.
    let knownHosts: URL
    /// An empty known-hosts file: with it the server's key is unknown.
    let emptyKnownHosts: URL
    /// The host key's fingerprint as OpenSSH prints it (`SHA256:…`).
    let hostKeyFingerprint: String

    private init(port: Int, prefix: URL, hostKeyFingerprint: String) {
        self.port = port
        files = prefix.appendingPathComponent("files", isDirectory: true)
        clientKey = prefix.appendingPathComponent("id_ed25519")
        knownHosts = prefix.appendingPathComponent("known_hosts")
        emptyKnownHosts = prefix.appendingPathComponent("known_hosts_empty")
        self.hostKeyFingerprint = hostKeyFingerprint
    }

    /// `sftp://courier-sftp@127.0.0.1:<port><files>/<name>`.
    func url(_ name: String) -> URL {
        URL(string: "sftp://\(Self.user)@127.0.0.1:\(port)\(files.path)/\(name)")!
    }

    /// The contents of the test file `name`.
    func contents(of name: String) throws -> Data {
        try Data(contentsOf: files.appendingPathComponent(name))
    }

    /// The process's server, started on first use.
    static func shared() throws -> BridgeSSHServer {
        try started.get()
    }

    private static let started: Result<BridgeSSHServer, TestSetupError> = Result { try start() }
        .mapError { $0 as? TestSetupError ?? TestSetupError("\($0)") }

    private static func start() throws -> BridgeSSHServer {
        let sshd = "/usr/sbin/sshd"
        guard FileManager.default.isExecutableFile(atPath: sshd) else { throw TestSetupError("no \(sshd): run scripts/setup") }
        guard getuid() == 0 else { throw TestSetupError("the bridge's sftp tests run sshd, which needs root") }
        guard let account = getpwnam(user) else { throw TestSetupError("the test account \(user) does not exist: run scripts/setup") }
        let keygen = try TestProcess.tool(["ssh-keygen"])
        let prefix = FileManager.default.temporaryDirectory.appendingPathComponent("courier-bridge-sshd-\(UUID().uuidString)", isDirectory: true)
        let files = prefix.appendingPathComponent("files", isDirectory: true)
        try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: prefix.path)
        TestProcess.removeAtExit(prefix)
        try? FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])

        let hostKey = prefix.appendingPathComponent("host_ed25519"), clientKey = prefix.appendingPathComponent("id_ed25519")
        for key in [hostKey, clientKey] {
            try TestProcess.run(keygen, ["-q", "-t", "ed25519", "-N", "", "-C", key.lastPathComponent, "-f", key.path])
        }
        let hostPublicKey = try String(contentsOf: URL(fileURLWithPath: hostKey.path + ".pub"), encoding: .utf8)
        let fingerprintLine = try TestProcess.run(keygen, ["-l", "-f", hostKey.path + ".pub"])
        let fingerprint = fingerprintLine.split(separator: " ").dropFirst().first.map(String.init) ?? ""
        try FileManager.default.copyItem(atPath: clientKey.path + ".pub", toPath: prefix.appendingPathComponent("authorized_keys").path)

        try hello.write(to: files.appendingPathComponent("hello.txt"))
        let uploads = files.appendingPathComponent("uploads", isDirectory: true)
        try FileManager.default.createDirectory(at: uploads, withIntermediateDirectories: true)
        guard chown(uploads.path, account.pointee.pw_uid, account.pointee.pw_gid) == 0 else {
            throw TestSetupError("cannot give \(uploads.path) to \(user)")
        }
        let block = Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) })
        try Data(repeatElement(block, count: bigSize / block.count).joined()).write(to: files.appendingPathComponent("big.bin"))

        var lastError = TestSetupError("sshd did not start")
        for _ in 0..<3 {
            let port = try TestProcess.freePort()
            let server = BridgeSSHServer(port: port, prefix: prefix, hostKeyFingerprint: fingerprint)
            let configuration = prefix.appendingPathComponent("sshd_config")
            try Data("""
                ListenAddress 127.0.0.1:\(port)
                HostKey \(hostKey.path)
                PidFile \(prefix.appendingPathComponent("sshd.pid").path)
                AuthorizedKeysFile \(prefix.appendingPathComponent("authorized_keys").path)
                StrictModes no
                UsePAM yes
                PasswordAuthentication no
                KbdInteractiveAuthentication no
                PermitRootLogin no
                AllowUsers \(user)
                Subsystem sftp internal-sftp
                LogLevel VERBOSE
                UseDNS no

                """.utf8).write(to: configuration)
            let log = prefix.appendingPathComponent("sshd.log")
            try TestProcess.startTied([sshd, "-D", "-e", "-f", configuration.path], log: log)
            let deadline = Date().addingTimeInterval(15)
            while Date() < deadline, !TestProcess.canConnect(port) { usleep(20_000) }
            if TestProcess.canConnect(port) {
                let keyFields = hostPublicKey.split(separator: " ").prefix(2).joined(separator: " ")
                try Data("[127.0.0.1]:\(port) \(keyFields)\n".utf8).write(to: server.knownHosts)
                try Data().write(to: server.emptyKnownHosts)
                return server
            }
            lastError = TestSetupError("sshd did not start on port \(port): \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        }
        throw lastError
    }
}
