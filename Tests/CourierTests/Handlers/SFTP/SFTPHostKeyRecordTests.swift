import Foundation
import Testing
@testable import Courier

/// What the known-hosts file records against the key a server presents: a changed key (another
/// key, also of another type) and a revoked key are refused outright, with no challenge that could
/// accept them; the handshake is limited to the recorded key types, so a server cannot dodge its
/// recorded key by offering a key of another type.
extension SFTPTests {
    @Suite("SFTP recorded host keys")
    struct HostKeyRecordTests {
        /// Loads hello.txt from the sshd on `port` in a session reading `file`, whose delegate
        /// accepts any host-key challenge explicitly; the completion error and the challenges seen.
        private func load(_ server: SSHServer, port: Int, file: URL) async throws -> (error: (any Error)?, body: Data?,
                                                                                      hostKeyChallenges: Int) {
            let seen = Locked<[URLAuthenticationChallenge]>([])
            let delegate = SFTPTest.acceptingHostKeyDelegate(seen: seen)
            let task = try await SFTPTest.loadHello(server, port: port, delegate: delegate) { $0.sshKnownHostsURL = file }
            return (delegate.error(of: task), delegate.body(of: task), SFTPTest.hostKeyChallenges(seen.current).count)
        }

        @Test func aChangedHostKeyIsRefusedOutright() async throws {
            let server = try await SFTPTest.server()
            let original = try server.makeHostKey("host_changing_a")
            let replacement = try server.makeHostKey("host_changing_b")
            var instance = try server.launchInstance(name: "changing", hostKeyFile: original.file)
            defer { instance.stop() }
            let port = instance.port
            let file = try SFTPTest.knownHosts(server, "# keys\n" + SSHServer.knownHostsLine(port: port, key: original.publicKey))

            // The recorded key: no challenge.
            let first = try await load(server, port: port, file: file)
            #expect(first.error == nil)
            #expect(first.hostKeyChallenges == 0)

            // The server comes back on the same port with another key: refused, and no challenge is
            // raised that a delegate could answer (this delegate would accept anything).
            instance.stop()
            instance = try server.launchInstance(name: "changing", hostKeyFile: replacement.file, port: port)
            let logins = server.acceptedLogins()
            let second = try await load(server, port: port, file: file)
            let error = try SFTPTest.urlError(second.error)
            #expect(error.code == .serverCertificateUntrusted)
            #expect(second.hostKeyChallenges == 0)
            #expect(second.body == Data())
            let description = error.localizedDescription
            #expect(description.contains("has changed"))
            #expect(description.contains("[127.0.0.1]:\(port)"))
            #expect(description.contains("ssh-ed25519 \(try SFTPTest.fingerprint(of: replacement.publicKey, server))"))
            #expect(description.contains("\(file.path):2"), "names the line to fix: \(description)")
            #expect(error.failingURL?.port == port)
            #expect(await server.waitForLogins(logins))
        }

        @Test func theRecordedKeyTypeIsNegotiated() async throws {
            // sshd offers ed25519 and ECDSA; libssh2 on its own prefers ECDSA. Only the ed25519 key is
            // recorded, so the handshake must ask for ed25519 and the server is trusted.
            let server = try await SFTPTest.server()
            let ecdsa = try server.makeHostKey("host_two_ecdsa", type: "ecdsa")
            let instance = try server.launchInstance(name: "two", hostKeyFile: server.hostKeyFile,
                                                     extra: "HostKey \(ecdsa.file.path)")
            defer { instance.stop() }
            let onlyEd25519 = try SFTPTest.knownHosts(server, SSHServer.knownHostsLine(port: instance.port, key: server.hostKey))
            let first = try await load(server, port: instance.port, file: onlyEd25519)
            #expect(first.error == nil)
            #expect(first.body == SSHServer.Files.helloContents)
            #expect(first.hostKeyChallenges == 0)

            let onlyECDSA = try SFTPTest.knownHosts(server, SSHServer.knownHostsLine(port: instance.port, key: ecdsa.publicKey))
            let second = try await load(server, port: instance.port, file: onlyECDSA)
            #expect(second.error == nil)
            #expect(second.hostKeyChallenges == 0)
        }

        @Test(arguments: ["ecdsa", "ed25519"])
        func aRecordedTypeTheServerDoesNotOfferIsAChangedKey(recordedType: String) async throws {
            // The main sshd has only its ed25519 key. Recorded: an ECDSA key (a type it does not
            // offer) or another ed25519 key, while the server also has an ECDSA key it could offer.
            let server = try await SFTPTest.server()
            let recorded = try server.makeHostKey("host_recorded_\(recordedType)", type: recordedType)
            let ecdsa = try server.makeHostKey("host_offered_ecdsa", type: "ecdsa")
            let instance = try server.launchInstance(name: "substitute", hostKeyFile: server.hostKeyFile,
                                                     extra: recordedType == "ed25519" ? "HostKey \(ecdsa.file.path)" : "")
            defer { instance.stop() }
            let file = try SFTPTest.knownHosts(server, SSHServer.knownHostsLine(port: instance.port, key: recorded.publicKey))
            let result = try await load(server, port: instance.port, file: file)
            let error = try SFTPTest.urlError(result.error)
            #expect(error.code == .serverCertificateUntrusted)
            #expect(error.localizedDescription.contains("has changed"), "\(error.localizedDescription)")
            #expect(error.localizedDescription.contains("\(file.path):1"))
            #expect(result.hostKeyChallenges == 0)
        }

        @Test func aRevokedKeyIsRefusedEvenWhenRecorded() async throws {
            let server = try await SFTPTest.server()
            let key = server.hostKey.split(separator: " ").prefix(2).joined(separator: " ")
            let file = try SFTPTest.knownHosts(server, SSHServer.knownHostsLine(port: server.port, key: server.hostKey)
                                                   + "@revoked * \(key)\n")
            let result = try await load(server, port: server.port, file: file)
            let error = try SFTPTest.urlError(result.error)
            #expect(error.code == .serverCertificateUntrusted)
            #expect(error.localizedDescription.contains("revoked"))
            #expect(error.localizedDescription.contains("\(file.path):2"))
            #expect(result.hostKeyChallenges == 0)
        }

        @Test func aRevokedUnknownKeyRaisesNoChallenge() async throws {
            let server = try await SFTPTest.server()
            let key = server.hostKey.split(separator: " ").prefix(2).joined(separator: " ")
            let file = try SFTPTest.knownHosts(server, "@revoked [127.0.0.1]:* \(key)\n")
            let result = try await load(server, port: server.port, file: file)
            #expect(try SFTPTest.urlError(result.error).code == .serverCertificateUntrusted)
            #expect(result.hostKeyChallenges == 0)
        }

        @Test func aRevokedLineForAnotherKeyOrHostChangesNothing() async throws {
            let server = try await SFTPTest.server()
            let other = try server.makeHostKey("host_revoked_other")
            let key = server.hostKey.split(separator: " ").prefix(2).joined(separator: " ")
            let otherKey = other.publicKey.split(separator: " ").prefix(2).joined(separator: " ")
            let file = try SFTPTest.knownHosts(server, "@revoked * \(otherKey)\n@revoked other.example \(key)\n"
                                                   + "@cert-authority * \(key)\n"
                                                   + SSHServer.knownHostsLine(port: server.port, key: server.hostKey))
            let result = try await load(server, port: server.port, file: file)
            #expect(result.error == nil)
            #expect(result.hostKeyChallenges == 0)
        }
    }
}
