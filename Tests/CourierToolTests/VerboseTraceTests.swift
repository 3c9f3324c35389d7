import Foundation
import Testing

@testable import CourierTool

/// `-v` shows what went over the wire, from libcurl's trace (`> ` sent, `< ` received, `* ` notes),
/// with credentials redacted unless `--trace-secrets`, and control bytes escaped; for sftp, the SSH
/// connection's notes.
@Suite("courier -v")
struct VerboseTraceTests {
    static let token = "dG9rZW4tc2VjcmV0"
    static let cookie = "biscuit-1234"

    /// The standard-error lines of `run`.
    static func lines(_ run: ToolRun) -> [String] {
        run.stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    @Test func showsTheRequestLineAndHeadersSent() async throws {
        let nginx = try await NginxServer.shared()
        let run = try await CourierBinary.run(["-v", "-H", "X-Trace: on", nginx.url("/hello.txt").absoluteString])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == NginxServer.Files.helloContents)
        let lines = Self.lines(run)
        #expect(lines.contains("> GET /hello.txt HTTP/1.1"), "\(run.stderr)")
        #expect(lines.contains("> Host: 127.0.0.1:\(nginx.httpPort)"), "\(run.stderr)")
        #expect(lines.contains("> X-Trace: on"), "\(run.stderr)")
        #expect(lines.contains("< HTTP/1.1 200 OK"), "\(run.stderr)")
        #expect(lines.contains { $0.hasPrefix("< Content-Length: ") }, "\(run.stderr)")
        #expect(lines.contains { $0.hasPrefix("* Connected to 127.0.0.1") }, "\(run.stderr)")
    }

    @Test func eachHeaderBlockEndsWithABlankLineAsCurlPrintsIt() async throws {
        let nginx = try await NginxServer.shared()
        let run = try await CourierBinary.run(["-v", nginx.url("/hello.txt").absoluteString])
        #expect(run.status == 0, "\(run.stderr)")
        // The request head, "> ", the response head, "< ", then the rest: only notes, no header line.
        let lines = Self.lines(run)
        let request = try #require(lines.firstIndex(of: "> GET /hello.txt HTTP/1.1"), "\(run.stderr)")
        let response = try #require(lines.firstIndex(of: "< HTTP/1.1 200 OK"), "\(run.stderr)")
        let requestEnd = try #require(lines[request...].firstIndex { !$0.hasPrefix("> ") || $0 == "> " }, "\(run.stderr)")
        let responseEnd = try #require(lines[response...].firstIndex { !$0.hasPrefix("< ") || $0 == "< " }, "\(run.stderr)")
        #expect(lines[requestEnd] == "> " && requestEnd + 1 == response && lines[responseEnd] == "< "
            && lines[(responseEnd + 1)...].allSatisfy { !$0.hasPrefix("> ") && !$0.hasPrefix("< ") }, "\(run.stderr)")
    }

    @Test func ftpCommandsAndRepliesGetNoBlankLines() async throws {
        let ftp = try await FTPTestServer.shared()
        let run = try await CourierBinary.run(["-v", "-u", "\(FTPTestServer.user):\(FTPTestServer.password)",
                                               ftp.url(FTPTestServer.Files.hello).absoluteString])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(!Self.lines(run).contains { $0 == "> " || $0 == "< " }, "\(run.stderr)")
    }

    @Test func redactsAuthorizationAndCookieByDefault() async throws {
        let nginx = try await NginxServer.shared()
        let run = try await CourierBinary.run(["-v", "-H", "Authorization: Bearer \(Self.token)", "-b", "session=\(Self.cookie)",
                                               nginx.url("/headers").absoluteString])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = Self.lines(run)
        #expect(lines.contains("> Authorization: Bearer [redacted]"), "\(run.stderr)")
        #expect(lines.contains("> Cookie: [redacted]"), "\(run.stderr)")
        #expect(!run.stderr.contains(Self.token) && !run.stderr.contains(Self.cookie), "\(run.stderr)")
    }

    @Test func traceSecretsShowsTheCredentials() async throws {
        let nginx = try await NginxServer.shared()
        let run = try await CourierBinary.run(["-v", "--trace-secrets", "-H", "Authorization: Bearer \(Self.token)",
                                               "-b", "session=\(Self.cookie)", nginx.url("/headers").absoluteString])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = Self.lines(run)
        #expect(lines.contains("> Authorization: Bearer \(Self.token)"), "\(run.stderr)")
        #expect(lines.contains("> Cookie: session=\(Self.cookie)"), "\(run.stderr)")
    }

    @Test func traceSecretsWithoutVerboseIsAUsageError() async throws {
        let run = try await CourierBinary.run(["--trace-secrets", "http://127.0.0.1:1/"])
        #expect(run.status == ToolExit.usage.rawValue)
        #expect(run.stderr.contains("--trace-secrets needs -v"), "\(run.stderr)")
    }

    @Test func escapesAControlByteTheServerSent() async throws {
        let head = Data("HTTP/1.1 200 OK\r\nX-Evil: a".utf8) + Data([0x1B]) + Data("[2Jb\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi".utf8)
        let server = try FaultServer(routes: ["/evil": .raw(head)])
        defer { server.stop() }
        let run = try await CourierBinary.run(["-v", server.url("/evil").absoluteString])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(Self.lines(run).contains("< X-Evil: a\\x1B[2Jb"), "\(run.stderr)")
        #expect(!run.stderr.utf8.contains(0x1B))
    }

    @Test func redactsTheFTPPassword() async throws {
        let ftp = try await FTPTestServer.shared()
        let run = try await CourierBinary.run(["-v", "-u", "\(FTPTestServer.user):\(FTPTestServer.password)",
                                               ftp.url(FTPTestServer.Files.hello).absoluteString])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = Self.lines(run)
        #expect(lines.contains("> USER \(FTPTestServer.user)"), "\(run.stderr)")
        #expect(lines.contains("> PASS [redacted]"), "\(run.stderr)")
        #expect(lines.contains { $0.hasPrefix("< 230") }, "\(run.stderr)")
        #expect(!run.stderr.contains("sesame"), "\(run.stderr)")
    }

    @Test(.enabled(if: getuid() == 0, "sshd with password logins needs root"))
    func showsTheSSHNegotiationForSFTP() async throws {
        let ssh = try await SSHServer.shared()
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let run = try await CourierBinary.run(["-v", "-k", "-u", "\(SSHServer.user):\(ssh.password)", ssh.url(SSHServer.Files.hello).absoluteString],
                                              environment: ["HOME": home.url.path])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = Self.lines(run)
        #expect(lines.contains { $0.hasPrefix("* SSH handshake: kex ") }, "\(run.stderr)")
        #expect(lines.contains { $0.hasPrefix("* Server host key: ") }, "\(run.stderr)")
        #expect(lines.contains { $0.hasPrefix("* Authenticated as \(SSHServer.user)@") }, "\(run.stderr)")
        #expect(!run.stderr.contains(ssh.password), "\(run.stderr)")
    }
}
