import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

@testable import CourierTool

/// `-o FILE`, where the body arrives as a download task's file that is renamed into place
/// (``DownloadFileSink``), or chunk by chunk when that cannot be a rename: what ends up in the
/// directory, against servers on 127.0.0.1 (one this test process runs for http, the shared ftp and
/// sftp test servers).
@Suite("courier -o FILE")
struct OutputFileTests {
    /// 3 MiB and a few bytes: several chunks, and a size no buffer rounds to.
    static let body = patternBytes(3 << 20 + 5)

    /// A server answering `/body` with ``body`` and `/cut` with half of it and then a closed
    /// connection.
    static func server() throws -> FaultServer {
        try FaultServer(routes: [
            "/body": .respond(.ok(body)),
            "/cut": .truncated(body: body.prefix(body.count / 2), declaredLength: body.count),
        ])
    }

    /// The permissions a new file gets here: 0666 less the umask.
    static var usualMode: Int {
        let mask = umask(0)
        umask(mask)
        return Int(0o666 & ~mask)
    }

    /// A `downloads` directory in `directory`, for `TMPDIR`: the download files Courier makes go
    /// there, on the target's file system, so what is left of them can be seen.
    static func downloadDirectory(in directory: TemporaryDirectory) throws -> URL {
        let downloads = directory.file("downloads")
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: false)
        return downloads
    }

    @Test func theBodyEndsUpInTheFileWithTheUsualPermissionsAndNothingElse() async throws {
        let server = try Self.server()
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let downloads = try Self.downloadDirectory(in: directory)
        let target = directory.file("out.bin")
        let run = try await CourierBinary.run(["-sS", "-o", target.path, server.url("/body").absoluteString],
                                              environment: ["TMPDIR": downloads.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(sameBytes(try Data(contentsOf: target), Self.body))
        let mode = try FileManager.default.attributesOfItem(atPath: target.path)[.posixPermissions] as? Int
        #expect(mode == Self.usualMode)
        #expect(try directory.contents() == ["downloads", "out.bin"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads.path).isEmpty)
    }

    @Test func aBodyCutShortLeavesThePreviousFileAndNoTemporaryOne() async throws {
        let server = try Self.server()
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let downloads = try Self.downloadDirectory(in: directory)
        let target = directory.file("out.bin")
        try Data("previous content".utf8).write(to: target)
        let run = try await CourierBinary.run(["-sS", "-o", target.path, server.url("/cut").absoluteString],
                                              environment: ["TMPDIR": downloads.path])
        #expect(run.status != 0)
        #expect(try String(contentsOf: target, encoding: .utf8) == "previous content")
        #expect(try directory.contents() == ["downloads", "out.bin"], "no temporary file may be left behind")
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads.path).isEmpty, "nor a download file")
    }

    @Test func includeWritesTheHeadersAndThenTheBodyIntoTheFile() async throws {
        let server = try Self.server()
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let target = directory.file("out.bin")
        let run = try await CourierBinary.run(["-sS", "-i", "-o", target.path, server.url("/body").absoluteString])
        #expect(run.status == 0, "\(run.stderr)")
        let written = try Data(contentsOf: target)
        #expect(written.starts(with: Data("HTTP/1.1 200".utf8)))
        #expect(written.count > Self.body.count && written.suffix(Self.body.count) == Self.body)
    }

    @Test func aTargetOnAnotherFileSystemThanTheDownloadDirectoryGetsTheWholeBody() async throws {
        let server = try Self.server()
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // /dev/shm is a tmpfs, so downloads made there cannot be renamed into the test directory:
        // the body is written chunk by chunk into the target's directory instead.
        let downloads = URL(fileURLWithPath: "/dev/shm/courier-tool-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: downloads) }
        let target = directory.file("out.bin")
        let run = try await CourierBinary.run(["-sS", "-o", target.path, server.url("/body").absoluteString],
                                              environment: ["TMPDIR": downloads.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(sameBytes(try Data(contentsOf: target), Self.body))
        #expect(try directory.contents() == ["out.bin"])
    }

    @Test func anFTPFileEndsUpInTheTargetAsTheServerHasIt() async throws {
        let ftp = try await FTPTestServer.shared()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let target = directory.file("medium.bin")
        let url = ftp.url(FTPTestServer.Files.medium).absoluteString
        let saved = try await CourierBinary.run(["-sS", "-o", target.path, url])
        let streamed = try await CourierBinary.run(["-sS", url])
        #expect(saved.status == 0 && streamed.status == 0, "\(saved.stderr)\(streamed.stderr)")
        let written = try Data(contentsOf: target)
        #expect(written.count == FTPTestServer.Files.mediumSize && sameBytes(written, streamed.stdout))
    }

    @Test(.enabled(if: getuid() == 0, "sshd with password logins needs root"))
    func anSFTPFileEndsUpInTheTargetAsTheServerHasIt() async throws {
        let ssh = try await SSHServer.shared()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let target = directory.file("medium.bin")
        let login = ["-k", "-u", "\(SSHServer.user):\(ssh.password)"]
        let url = ssh.url(SSHServer.Files.medium).absoluteString
        let saved = try await CourierBinary.run(login + ["-sS", "-o", target.path, url], environment: ["HOME": directory.url.path])
        let streamed = try await CourierBinary.run(login + ["-sS", url], environment: ["HOME": directory.url.path])
        #expect(saved.status == 0 && streamed.status == 0, "\(saved.stderr)\(streamed.stderr)")
        let written = try Data(contentsOf: target)
        #expect(written.count == SSHServer.Files.mediumSize && sameBytes(written, streamed.stdout))
    }
}
