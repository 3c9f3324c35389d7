import Foundation
import Testing
@testable import Courier

/// Logging in: passwords (URL, credential storage, challenge; `password` and
/// `keyboard-interactive`), keys (ed25519 plain and encrypted, ECDSA, RSA's clear failure), the
/// ssh-agent and default identity files, and the failures.
extension SFTPTests {
    @Suite("SFTP authentication")
    struct AuthenticationTests {
        private var passwordSpaceMethod: String { NSURLAuthenticationMethodDefault }

        private func space(_ server: SSHServer, port: Int? = nil) -> URLProtectionSpace {
            URLProtectionSpace(host: "127.0.0.1", port: port ?? server.port, protocol: "sftp", realm: nil,
                               authenticationMethod: NSURLAuthenticationMethodDefault)
        }

        private func keyCredential(_ key: URL, passphrase: String? = nil) -> URLCredential {
            URLCredential(user: SSHServer.user, privateKeyURL: key, passphrase: passphrase, persistence: .none)
        }

        /// Loads hello.txt with a delegate answering password challenges with `credential`.
        private func load(with credential: URLCredential, _ server: SSHServer,
                          configure: (URLSessionConfiguration) -> Void = { _ in })
            async throws -> (EventDelegate, URLSessionTask, [URLAuthenticationChallenge]) {
            let seen = Locked<[URLAuthenticationChallenge]>([])
            let delegate = SFTPTest.credentialDelegate(credential, seen: seen)
            let session = SFTPTest.session(server, delegate: delegate, configure: configure)
            defer { session.finishTasksAndInvalidate() }
            let task = session.dataTask(with: server.url(SSHServer.Files.hello))
            try await SFTPTest.run(task, delegate)
            return (delegate, task, seen.current)
        }

        @Test func passwordFromCredentialStorage() async throws {
            let server = try await SFTPTest.server()
            let storage = URLCredentialStorage()
            storage.set(URLCredential(user: SSHServer.user, password: server.password, persistence: .forSession), for: space(server))
            let session = SFTPTest.session(server) { $0.urlCredentialStorage = storage }
            defer { session.finishTasksAndInvalidate() }
            let result = try await session.loadData(server.url(SSHServer.Files.hello))
            #expect(result.error == nil)
            #expect(result.data == SSHServer.Files.helloContents)
        }

        @Test func passwordFromChallengeIsStored() async throws {
            let server = try await SFTPTest.server()
            let storage = URLCredentialStorage()
            let credential = URLCredential(user: SSHServer.user, password: server.password, persistence: .forSession)
            let (delegate, task, challenges) = try await load(with: credential, server) { $0.urlCredentialStorage = storage }
            #expect(delegate.error(of: task) == nil)
            #expect(delegate.body(of: task) == SSHServer.Files.helloContents)
            let challenge = try #require(challenges.first)
            #expect(challenges.count == 1)
            #expect(challenge.protectionSpace.host == "127.0.0.1")
            #expect(challenge.protectionSpace.port == server.port)
            #expect(challenge.protectionSpace.protocol == "sftp")
            #expect(challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodDefault)
            #expect(challenge.protectionSpace.receivesCredentialSecurely)
            #expect(challenge.previousFailureCount == 0)
            #expect(storage.credentials(for: space(server))?[SSHServer.user]?.password == server.password)
        }

        @Test func keyboardInteractiveWhenPasswordAuthenticationIsOff() async throws {
            let server = try await SFTPTest.server()
            let instance = try server.launchInstance(name: "kbdint", hostKeyFile: server.hostKeyFile,
                                                     extra: "PasswordAuthentication no\nKbdInteractiveAuthentication yes\nPubkeyAuthentication no")
            defer { instance.stop() }
            let knownHosts = server.prefix.appendingPathComponent("known_hosts_kbdint")
            try Data(SSHServer.knownHostsLine(port: instance.port, key: server.hostKey).utf8).write(to: knownHosts)
            let session = SFTPTest.session(server) { $0.sshKnownHostsURL = knownHosts }
            defer { session.finishTasksAndInvalidate() }
            let result = try await session.loadData(server.url(SSHServer.Files.hello, password: true, port: instance.port))
            #expect(result.error == nil)
            #expect(result.data == SSHServer.Files.helloContents)
            let log = (try? String(contentsOf: server.prefix.appendingPathComponent("sshd_kbdint.log"), encoding: .utf8)) ?? ""
            #expect(log.contains("Accepted keyboard-interactive"))
        }

        @Test(arguments: ["ed25519", "ecdsa"])
        func keyFromChallenge(kind: String) async throws {
            let server = try await SFTPTest.server()
            let key = kind == "ed25519" ? server.keys.ed25519 : server.keys.ecdsa
            let (delegate, task, challenges) = try await load(with: keyCredential(key), server)
            #expect(delegate.error(of: task) == nil)
            #expect(delegate.body(of: task) == SSHServer.Files.helloContents)
            #expect(challenges.count == 1)
        }

        @Test func encryptedKeyWithPassphrase() async throws {
            let server = try await SFTPTest.server()
            let credential = keyCredential(server.keys.ed25519Encrypted, passphrase: SSHServer.Keys.passphrase)
            let (delegate, task, _) = try await load(with: credential, server)
            #expect(delegate.error(of: task) == nil)
            #expect(delegate.body(of: task) == SSHServer.Files.helloContents)
        }

        @Test func encryptedKeyWithWrongPassphraseFails() async throws {
            let server = try await SFTPTest.server()
            let credential = keyCredential(server.keys.ed25519Encrypted, passphrase: "not the passphrase")
            let (delegate, task, challenges) = try await load(with: credential, server)
            let error = try SFTPTest.urlError(delegate.error(of: task))
            #expect(error.code == .userAuthenticationRequired)
            #expect(error.localizedDescription.contains("passphrase"))
            // The delegate gave the same credential again: the exchange ends instead of looping.
            #expect(challenges.count == 2)
            #expect(challenges.last?.previousFailureCount == 1)
        }

        @Test func rsaKeyFailsPromptlyAndSaysWhy() async throws {
            let server = try await SFTPTest.server()
            let started = Date()
            let (delegate, task, _) = try await load(with: keyCredential(server.keys.rsa), server)
            if SSHLibrary.signsRSAWithSHA2 {
                #expect(delegate.error(of: task) == nil)
            } else {
                let error = try SFTPTest.urlError(delegate.error(of: task))
                #expect(error.code == .userAuthenticationRequired)
                #expect(error.localizedDescription.contains("SHA-1"))
                #expect(error.localizedDescription.contains("RSA"))
                #expect(Date().timeIntervalSince(started) < 10)
            }
        }

        @Test func wrongPasswordFails() async throws {
            let server = try await SFTPTest.server()
            let credential = URLCredential(user: SSHServer.user, password: "wrong", persistence: .none)
            let (delegate, task, challenges) = try await load(with: credential, server)
            let error = try SFTPTest.urlError(delegate.error(of: task))
            #expect(error.code == .userAuthenticationRequired)
            #expect(error.failingURL != nil)
            #expect(challenges.map(\.previousFailureCount) == [0, 1])
        }

        @Test func unauthorizedKeyFails() async throws {
            let server = try await SFTPTest.server()
            let (delegate, task, _) = try await load(with: keyCredential(server.keys.unauthorized), server)
            #expect(try SFTPTest.urlError(delegate.error(of: task)).code == .userAuthenticationRequired)
        }

        @Test func noCredentialAndNoDelegateFails() async throws {
            let server = try await SFTPTest.server()
            let session = SFTPTest.session(server)
            defer { session.finishTasksAndInvalidate() }
            let result = try await session.loadData(server.url(SSHServer.Files.hello))
            #expect(try SFTPTest.urlError(result.error).code == .userAuthenticationRequired)
        }

        @Test func cancellingTheChallengeCancels() async throws {
            let server = try await SFTPTest.server()
            let delegate = EventDelegate(EventDelegate.Hooks(challenge: { _, _, answer in answer(.cancelAuthenticationChallenge, nil) }))
            let session = SFTPTest.session(server, delegate: delegate)
            defer { session.finishTasksAndInvalidate() }
            let task = session.dataTask(with: server.url(SSHServer.Files.hello))
            try await SFTPTest.run(task, delegate)
            #expect(try SFTPTest.urlError(delegate.error(of: task)).code == .cancelled)
        }

        @Test func defaultIdentityFile() async throws {
            let server = try await SFTPTest.server()
            let directory = server.prefix.appendingPathComponent("home-\(UUID().uuidString)/.ssh", isDirectory: true)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: server.keys.ecdsa, to: directory.appendingPathComponent("id_ecdsa"))
            // An encrypted default key is skipped, as OpenSSH skips it without a passphrase prompt.
            try FileManager.default.copyItem(at: server.keys.ed25519Encrypted, to: directory.appendingPathComponent("id_ed25519"))
            let session = SFTPTest.session(server) {
                $0.sshUserEnvironment = SSHUserEnvironment(agentSocketPath: nil, identityDirectory: directory)
            }
            defer { session.finishTasksAndInvalidate() }
            let result = try await session.loadData(server.url(SSHServer.Files.hello))
            #expect(result.error == nil)
            #expect(result.data == SSHServer.Files.helloContents)
        }

        @Test func sshAgent() async throws {
            let server = try await SFTPTest.server()
            let agent = try SSHAgentProcess(directory: server.prefix)
            defer { agent.stop() }
            try agent.add(server.keys.agent)
            let session = SFTPTest.session(server) {
                $0.sshUserEnvironment = SSHUserEnvironment(agentSocketPath: agent.socket.path, identityDirectory: nil)
            }
            defer { session.finishTasksAndInvalidate() }
            let result = try await session.loadData(server.url(SSHServer.Files.hello))
            #expect(result.error == nil)
            #expect(result.data == SSHServer.Files.helloContents)
        }
    }
}

/// An ssh-agent of the test's own, on a socket in `directory`.
final class SSHAgentProcess: @unchecked Sendable {
    let socket: URL
    private let process: TestChildProcess

    init(directory: URL) throws {
        socket = directory.appendingPathComponent("agent-\(UUID().uuidString.prefix(8)).sock")
        process = try TestChildProcess(try SSHServer.tool("ssh-agent"), ["-D", "-a", socket.path], diesWithTests: true)
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: socket.path), Date() < deadline, process.isRunning { usleep(10_000) }
        guard FileManager.default.fileExists(atPath: socket.path) else { throw FaultServerError("ssh-agent did not start") }
    }

    /// `ssh-add key`.
    func add(_ key: URL) throws {
        let result = try TestChildProcess.run(try SSHServer.tool("ssh-add"), ["-q", key.path],
                                              environment: ["SSH_AUTH_SOCK": socket.path, "PATH": "/usr/bin:/bin"], timeout: 10)
        guard result.status == 0 else { throw FaultServerError("ssh-add failed: \(result.output)") }
    }

    func stop() {
        process.stop()
        try? FileManager.default.removeItem(at: socket)
    }
}
