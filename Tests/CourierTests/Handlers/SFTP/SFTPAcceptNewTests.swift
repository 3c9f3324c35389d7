import Foundation
import Testing
@testable import Courier
#if canImport(Glibc)
import Glibc
#endif

/// `sshStrictHostKeyChecking = .acceptNew`, OpenSSH's `accept-new`: an unknown host is recorded in
/// the known-hosts file and trusted; a changed key is still refused; an unsafe file is not written.
extension SFTPTests {
    @Suite("SFTP accept-new")
    struct AcceptNewTests {
        /// A fresh directory under the server's prefix.
        private func directory(_ server: SSHServer) throws -> URL {
            let url = server.prefix.appendingPathComponent("accept-new-\(UUID().uuidString.prefix(8))", isDirectory: true)
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            return url
        }

        private func mode(_ url: URL) -> mode_t {
            var info = stat()
            return stat(url.path, &info) == 0 ? info.st_mode & 0o7777 : 0
        }

        /// Loads hello.txt from `port` with `strictness`, recording challenges; the task's error.
        private func load(_ server: SSHServer, port: Int, strictness: SSHStrictHostKeyChecking,
                          seen: Locked<[URLAuthenticationChallenge]>,
                          configure: @escaping (URLSessionConfiguration) -> Void) async throws -> (any Error)? {
            let delegate = SFTPTest.hostKeyDelegate(.performDefaultHandling, seen: seen)
            let task = try await SFTPTest.loadHello(server, port: port, delegate: delegate) {
                $0.sshStrictHostKeyChecking = strictness
                configure($0)
            }
            return delegate.error(of: task)
        }

        @Test func aNewHostIsRecordedThenTrustedAndAChangedKeyIsStillRefused() async throws {
            let server = try await SFTPTest.server()
            let original = try server.makeHostKey("host_accept_new_a")
            let replacement = try server.makeHostKey("host_accept_new_b")
            var instance = try server.launchInstance(name: "acceptnew", hostKeyFile: original.file)
            defer { instance.stop() }
            let port = instance.port
            let file = try directory(server).appendingPathComponent("known_hosts")

            let seen = Locked<[URLAuthenticationChallenge]>([])
            let first = try await load(server, port: port, strictness: .acceptNew, seen: seen) { $0.sshKnownHostsURL = file }
            #expect(first == nil)
            #expect(SFTPTest.hostKeyChallenges(seen.current).isEmpty, "accept-new asks no one")
            let recorded = try String(contentsOf: file, encoding: .utf8)
            #expect(recorded == SSHServer.knownHostsLine(port: port, key: original.publicKey))
            #expect(mode(file) == 0o600)

            // Another session, strict: the recorded key is trusted without a challenge.
            let strict = try await load(server, port: port, strictness: .yes, seen: seen) { $0.sshKnownHostsURL = file }
            #expect(strict == nil)
            #expect(SFTPTest.hostKeyChallenges(seen.current).isEmpty)

            // The key changes: refused, no challenge, nothing written.
            instance.stop()
            instance = try server.launchInstance(name: "acceptnew", hostKeyFile: replacement.file, port: port)
            let changed = try await load(server, port: port, strictness: .acceptNew, seen: seen) { $0.sshKnownHostsURL = file }
            let error = try SFTPTest.urlError(changed)
            #expect(error.code == .serverCertificateUntrusted)
            #expect(error.localizedDescription.contains("has changed"))
            #expect(SFTPTest.hostKeyChallenges(seen.current).isEmpty)
            #expect(try String(contentsOf: file, encoding: .utf8) == recorded)
        }

        @Test func theUserFileAndItsDirectoryAreCreatedPrivate() async throws {
            let server = try await SFTPTest.server()
            let sshDirectory = try directory(server).appendingPathComponent(".ssh", isDirectory: true)
            let file = sshDirectory.appendingPathComponent("known_hosts")
            let seen = Locked<[URLAuthenticationChallenge]>([])
            let error = try await load(server, port: server.port, strictness: .acceptNew, seen: seen) {
                $0.sshKnownHostsURL = nil
                $0.sshUserEnvironment = SSHUserEnvironment(agentSocketPath: nil, identityDirectory: nil, userKnownHostsFile: file)
            }
            #expect(error == nil)
            #expect(mode(sshDirectory) == 0o700)
            #expect(mode(file) == 0o600)
            #expect(try String(contentsOf: file, encoding: .utf8) == SSHServer.knownHostsLine(port: server.port, key: server.hostKey))
        }

        @Test func aLineIsAppendedAfterTheExistingOnes() async throws {
            let server = try await SFTPTest.server()
            let file = try directory(server).appendingPathComponent("known_hosts")
            let existing = "# mine\nexample.org ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLE"
            try Data(existing.utf8).write(to: file)
            chmod(file.path, 0o600)
            let error = try await load(server, port: server.port, strictness: .acceptNew, seen: Locked([])) { $0.sshKnownHostsURL = file }
            #expect(error == nil)
            #expect(try String(contentsOf: file, encoding: .utf8)
                    == existing + "\n" + SSHServer.knownHostsLine(port: server.port, key: server.hostKey))
        }

        enum UnsafeFile: String, CaseIterable, Sendable {
            case symbolicLink, writableByOthers, ownedByAnotherUser
        }

        @Test(arguments: UnsafeFile.allCases)
        func anUnsafeFileIsNotWrittenAndTheHostIsAskedAbout(_ unsafe: UnsafeFile) async throws {
            let server = try await SFTPTest.server()
            let folder = try directory(server)
            let file = folder.appendingPathComponent("known_hosts")
            let target = folder.appendingPathComponent("elsewhere")
            try Data().write(to: target)
            chmod(target.path, 0o600)
            switch unsafe {
            case .symbolicLink:
                try FileManager.default.createSymbolicLink(at: file, withDestinationURL: target)
            case .writableByOthers:
                try Data().write(to: file)
                chmod(file.path, 0o666)
            case .ownedByAnotherUser:
                try Data().write(to: file)
                chmod(file.path, 0o600)
                let account = try #require(getpwnam(SSHServer.user))
                chown(file.path, account.pointee.pw_uid, account.pointee.pw_gid)
            }
            let seen = Locked<[URLAuthenticationChallenge]>([])
            let error = try SFTPTest.urlError(try await load(server, port: server.port, strictness: .acceptNew, seen: seen) {
                $0.sshKnownHostsURL = file
            })
            #expect(error.code == .serverCertificateUntrusted)
            #expect(error.localizedDescription.contains("could not be recorded"), "\(error.localizedDescription)")
            let challenge = try #require(SFTPTest.hostKeyChallenges(seen.current).first, "treated as with .yes: the delegate is asked")
            #expect(challenge.error?.localizedDescription.contains(file.path) == true)
            #expect(try Data(contentsOf: file).isEmpty)
            #expect(try Data(contentsOf: target).isEmpty)
        }
    }
}
