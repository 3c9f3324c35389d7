import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An MIT Kerberos realm of the test process's own, for the Negotiate tests: a KDC (`krb5kdc`) on
/// a free 127.0.0.1 port, in a temporary directory with its own `krb5.conf` and `kdc.conf` (realm
/// ``realm``, no DNS: `dns_canonicalize_hostname = false`, `rdns = false`), the principals
/// ``user`` and `HTTP/127.0.0.1` (``serviceKeytab`` holds the service's key, for the server), and a
/// ticket cache for the user made with `kinit` (``ticketCache``).
///
/// Started once per test process on first use (bounded); the KDC ends with the test process (its
/// parent-death signal) and the directory is removed at exit. It needs `krb5kdc`, `kdb5_util`,
/// `kadmin.local` and `kinit` (apt `krb5-kdc`, `krb5-admin-server`, `krb5-user`; `scripts/setup`).
///
/// GSS-API (libcurl's and Courier's) reads `KRB5_CONFIG` and `KRB5CCNAME` from the process's
/// environment: ``withClient(ticket:_:)`` points them at this realm only while a test runs, one
/// test at a time, and restores them.
final class KerberosTestRealm: Sendable {
    /// The realm's name.
    static let realm = "COURIER.TEST"
    /// The client principal whose ticket ``ticketCache`` holds.
    static let user = "alice"

    /// The realm's `krb5.conf`.
    let configuration: URL
    /// A `krb5.conf` for the same realm whose KDC is a 127.0.0.1 port nothing listens on.
    let unreachableConfiguration: URL
    /// The keytab with the key of `HTTP/127.0.0.1@COURIER.TEST`.
    let serviceKeytab: URL
    /// A `FILE:` ticket cache holding the user's ticket-granting ticket.
    let ticketCache: URL
    /// A `FILE:` ticket cache that does not exist (no ticket).
    let emptyTicketCache: URL
    /// The temporary directory the realm lives in.
    let directory: URL
    /// The KDC's port on 127.0.0.1 (UDP and TCP).
    let kdcPort: Int

    private init(directory: URL, kdcPort: Int) {
        self.directory = directory
        self.kdcPort = kdcPort
        configuration = directory.appendingPathComponent("krb5.conf")
        unreachableConfiguration = directory.appendingPathComponent("krb5-unreachable.conf")
        serviceKeytab = directory.appendingPathComponent("http.keytab")
        ticketCache = directory.appendingPathComponent("ccache")
        emptyTicketCache = directory.appendingPathComponent("no-ccache")
    }

    private static let launch = SharedServerLaunch<KerberosTestRealm>(name: "the Kerberos test realm") {
        (try start(), nil)
    }

    /// The process's realm, started on first use (bounded).
    static func shared() async throws -> KerberosTestRealm { try await launch.server() }

    // MARK: The client's environment

    private static let gate = KerberosTestGate()

    /// Runs `body` with `KRB5_CONFIG` naming this realm's `krb5.conf` (``unreachableConfiguration``
    /// without `kdcReachable`) and `KRB5CCNAME` naming the user's ticket cache (`ticket`) or a cache
    /// that does not exist; restores both afterwards. One such scope runs at a time in the process;
    /// other code that reads these variables meanwhile (only GSS-API does) sees this realm.
    func withClient<T: Sendable>(ticket: Bool, kdcReachable: Bool = true, _ body: @Sendable () async throws -> T) async throws -> T {
        await Self.gate.enter()
        let saved: [(String, String?)] = ["KRB5_CONFIG", "KRB5CCNAME"].map { name in
            (name, getenv(name).map { String(cString: $0) })
        }
        setenv("KRB5_CONFIG", (kdcReachable ? configuration : unreachableConfiguration).path, 1)
        setenv("KRB5CCNAME", "FILE:" + (ticket ? ticketCache : emptyTicketCache).path, 1)
        defer {
            for (name, value) in saved {
                if let value { setenv(name, value, 1) } else { unsetenv(name) }
            }
            Self.gate.leave()
        }
        return try await body()
    }

    /// The environment of the realm's tools and of a server that accepts its tickets.
    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var variables = ProcessInfo.processInfo.environment
        variables["KRB5_CONFIG"] = configuration.path
        variables["KRB5_KDC_PROFILE"] = directory.appendingPathComponent("kdc.conf").path
        variables["KRB5CCNAME"] = "FILE:" + ticketCache.path
        variables["KRB5RCACHEDIR"] = directory.path
        variables["KRB5_KTNAME"] = "FILE:" + serviceKeytab.path
        return variables.merging(extra) { $1 }
    }

    // MARK: Starting

    private static let tools = (kdc: "/usr/sbin/krb5kdc", database: "/usr/sbin/kdb5_util", admin: "/usr/sbin/kadmin.local",
                                kinit: "/usr/bin/kinit")

    private static func start() throws -> KerberosTestRealm {
        for tool in [tools.kdc, tools.database, tools.admin, tools.kinit] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw FaultServerError("\(tool) is missing: run scripts/setup (apt krb5-kdc, krb5-admin-server, krb5-user)")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-krb5-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        TestServerExitCleanup.removeAtExit(directory)
        let realm = KerberosTestRealm(directory: directory, kdcPort: try FTPTestServer.unusedPort())
        try realm.writeConfiguration(to: realm.configuration, kdcPort: realm.kdcPort)
        try realm.writeConfiguration(to: realm.unreachableConfiguration, kdcPort: try FTPTestServer.unusedPort())
        try realm.writeKDCConfiguration()
        let environment = realm.environment()
        let clientKeytab = directory.appendingPathComponent("client.keytab")
        try realm.run(tools.database, ["create", "-s", "-r", realm.realmName, "-P", UUID().uuidString], environment)
        for command in ["addprinc -randkey \(user)", "addprinc -randkey HTTP/127.0.0.1",
                        "ktadd -k \(realm.serviceKeytab.path) HTTP/127.0.0.1", "ktadd -k \(clientKeytab.path) \(user)"] {
            try realm.run(tools.admin, ["-q", command], environment)
        }
        let kdc = try TestChildProcess(tools.kdc, ["-n"], environment: environment,
                                       output: directory.appendingPathComponent("krb5kdc.out"), diesWithTests: true)
        TestServerExitCleanup.stopAtExit(pid: kdc.pid)
        // The ticket: kinit from the user's keytab, retried until the KDC answers (bounded).
        let deadline = Date().addingTimeInterval(testWaitLimit)
        var last = ""
        while Date() < deadline, kdc.isRunning {
            let (status, output) = try TestChildProcess.run(tools.kinit, ["-k", "-t", clientKeytab.path, user], environment: environment,
                                                            timeout: testWaitLimit)
            if status == 0 { return realm }
            last = output
            usleep(50_000)
        }
        kdc.stop()
        let log = (try? String(contentsOf: directory.appendingPathComponent("kdc.log"), encoding: .utf8)) ?? ""
        throw FaultServerError("the test KDC gave no ticket within \(testWaitLimit) s: \(last) \(log.suffix(1000))")
    }

    private var realmName: String { Self.realm }

    /// Runs one of the realm's tools to completion (bounded); throws with its output if it fails.
    private func run(_ tool: String, _ arguments: [String], _ environment: [String: String]) throws {
        let (status, output) = try TestChildProcess.run(tool, arguments, environment: environment, timeout: testWaitLimit)
        guard status == 0 else { throw FaultServerError("\(tool) \(arguments.joined(separator: " ")) failed (\(status)): \(output)") }
    }

    /// Writes a `krb5.conf` (the client's and the tools') naming the KDC at `kdcPort` to `file`.
    private func writeConfiguration(to file: URL, kdcPort: Int) throws {
        let client = """
            [libdefaults]
                default_realm = \(Self.realm)
                dns_canonicalize_hostname = false
                rdns = false
                dns_lookup_kdc = false
                dns_lookup_realm = false
                udp_preference_limit = 1
                kdc_timeout = 2s
                max_retries = 1
            [realms]
                \(Self.realm) = {
                    kdc = 127.0.0.1:\(kdcPort)
                }
            [domain_realm]
                127.0.0.1 = \(Self.realm)

            """
        try Data(client.utf8).write(to: file)
    }

    /// Writes `kdc.conf` (the KDC's database and ports) and its empty ACL file.
    private func writeKDCConfiguration() throws {
        let kdc = """
            [kdcdefaults]
                kdc_listen = 127.0.0.1:\(kdcPort)
                kdc_tcp_listen = 127.0.0.1:\(kdcPort)
            [realms]
                \(Self.realm) = {
                    database_name = \(directory.appendingPathComponent("principal").path)
                    key_stash_file = \(directory.appendingPathComponent("stash").path)
                    acl_file = \(directory.appendingPathComponent("kadm5.acl").path)
                    kdc_listen = 127.0.0.1:\(kdcPort)
                    kdc_tcp_listen = 127.0.0.1:\(kdcPort)
                }
            [logging]
                kdc = FILE:\(directory.appendingPathComponent("kdc.log").path)

            """
        try Data(kdc.utf8).write(to: directory.appendingPathComponent("kdc.conf"))
        try Data().write(to: directory.appendingPathComponent("kadm5.acl"))
    }
}
