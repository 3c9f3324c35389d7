import Foundation
import Testing

@testable import CourierTool

/// The options that meet TLS, FTP and SFTP servers (`-k`, `--cacert`, `-T`, `-u`, `-C`), against the
/// real nginx, pyftpdlib and sshd servers the library's tests use, started by this test process.
@Suite("courier against nginx, FTP and sshd")
struct CurlSchemeOptionTests {
    // MARK: https: -k and --cacert

    @Test func aSelfSignedServerIsRefusedByDefault() async throws {
        let nginx = try await NginxServer.shared()
        let run = try await CourierBinary.run([nginx.httpsURL("/hello.txt").absoluteString])
        #expect(run.status == ToolExit.security.rawValue, "\(run.stderr)")
        #expect(run.stdout.isEmpty)
    }

    @Test func insecureAcceptsTheServerTrust() async throws {
        let nginx = try await NginxServer.shared()
        let run = try await CourierBinary.run(["-k", nginx.httpsURL("/hello.txt").absoluteString])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == NginxServer.Files.helloContents)
    }

    @Test func cacertTrustsTheGivenCertificate() async throws {
        let nginx = try await NginxServer.shared()
        let run = try await CourierBinary.run(["--cacert", nginx.certificatePEM.path, "-w", " %{http_version}",
                                               nginx.httpsURL("/hello.txt").absoluteString])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == NginxServer.Files.helloContents + Data(" 2".utf8))
    }

    @Test func aMissingCacertFileIsAUsageError() async throws {
        let run = try await CourierBinary.run(["--cacert", "/nonexistent/ca.pem", "https://127.0.0.1:1/"])
        #expect(run.status == ToolExit.usage.rawValue)
    }

    // MARK: ftp: -u, -T, -C

    @Test func ftpUploadStreamsTheFileWithTheUsersLogin() async throws {
        let ftp = try await FTPTestServer.shared()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let bytes = patternBytes(2 << 20 + 3)
        let name = "tool-\(UUID().uuidString).bin"
        try bytes.write(to: directory.file(name))
        let target = ftp.url(FTPTestServer.Files.upload).absoluteString
        let run = try await CourierBinary.run(["-u", "\(FTPTestServer.user):\(FTPTestServer.password)",
                                               "-T", directory.file(name).path, target])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(sameBytes(try ftp.contents(of: FTPTestServer.Files.upload + name), bytes))
    }

    @Test func ftpDownloadWithTheUsersLogin() async throws {
        let ftp = try await FTPTestServer.shared()
        let run = try await CourierBinary.run(["-u", "\(FTPTestServer.user):\(FTPTestServer.password)",
                                               ftp.url(FTPTestServer.Files.hello).absoluteString])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == FTPTestServer.Files.helloContents)
    }

    @Test func continueAtOverFTPFetchesOnlyTheRest() async throws {
        let ftp = try await FTPTestServer.shared()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.file("part.bin")
        // The part on disk is not the file's start: what follows it proves only the rest was fetched.
        try Data("XXXXX".utf8).write(to: file)
        let run = try await CourierBinary.run(["-C", "-", "-o", file.path, ftp.url(FTPTestServer.Files.hello).absoluteString])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try Data(contentsOf: file) == Data("XXXXX".utf8) + FTPTestServer.Files.helloContents.dropFirst(5))
    }

    @Test func continueAtPastTheEndOfAnFTPFileFails() async throws {
        let ftp = try await FTPTestServer.shared()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.file("part.bin")
        let tooLong = Data(repeating: 0x41, count: FTPTestServer.Files.helloContents.count + 1)
        try tooLong.write(to: file)
        let run = try await CourierBinary.run(["-C", "-", "-o", file.path, ftp.url(FTPTestServer.Files.hello).absoluteString])
        #expect(run.status == ToolExit.badURL.rawValue, "\(run.stderr)")
        #expect(run.stderr.contains("past the end of the file"), "\(run.stderr)")
        #expect(try Data(contentsOf: file) == tooLong)
    }

    // MARK: sftp: -k, -u, -T, -C

    @Test(.enabled(if: getuid() == 0, "sshd with password logins needs root"))
    func continueAtOverSFTPFetchesOnlyTheRest() async throws {
        let ssh = try await SSHServer.shared()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.file("part.bin")
        try Data("XXXXX".utf8).write(to: file)
        let run = try await CourierBinary.run(["-k", "-u", "\(SSHServer.user):\(ssh.password)", "-C", "-", "-o", file.path,
                                               ssh.url(SSHServer.Files.hello).absoluteString],
                                              environment: ["HOME": directory.url.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try Data(contentsOf: file) == Data("XXXXX".utf8) + SSHServer.Files.helloContents.dropFirst(5))
    }

    @Test(.enabled(if: getuid() == 0, "sshd with password logins needs root"))
    func sftpUploadWithInsecureHostKeyAndLogin() async throws {
        let ssh = try await SSHServer.shared()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let bytes = patternBytes(1 << 20 + 9)
        let name = "tool-\(UUID().uuidString).bin"
        try bytes.write(to: directory.file(name))
        let target = "sftp://127.0.0.1:\(ssh.port)\(ssh.files.path)/\(SSHServer.Files.uploads)/"
        let run = try await CourierBinary.run(["-k", "-u", "\(SSHServer.user):\(ssh.password)", "-T", directory.file(name).path, target],
                                              environment: ["HOME": directory.url.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(sameBytes(try ssh.contents(of: "\(SSHServer.Files.uploads)/\(name)"), bytes))
    }

    @Test(.enabled(if: getuid() == 0, "sshd with password logins needs root"))
    func sftpRefusesAnUnknownHostKeyWithoutInsecure() async throws {
        let ssh = try await SSHServer.shared()
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let run = try await CourierBinary.run(["-u", "\(SSHServer.user):\(ssh.password)", ssh.url(SSHServer.Files.hello).absoluteString],
                                              environment: ["HOME": home.url.path])
        #expect(run.status == ToolExit.security.rawValue, "\(run.stderr)")
        #expect(run.stdout.isEmpty)
    }
}
