import Foundation
import Testing
@testable import Courier

/// Host-key checking as OpenSSH's StrictHostKeyChecking: known keys (plain and hashed entries)
/// pass silently, unknown and changed keys raise an `NSURLAuthenticationMethodSSHHostKey` challenge,
/// and the answers to it.
extension SFTPTests {
    @Suite("SFTP host keys")
    struct HostKeyTests {
        /// A known-hosts file with `lines`.
        private func knownHosts(_ server: SSHServer, _ lines: String) throws -> URL {
            let file = server.prefix.appendingPathComponent("known_hosts_\(UUID().uuidString.prefix(8))")
            try Data(lines.utf8).write(to: file)
            return file
        }

        /// The SHA-256 fingerprint `ssh-keygen -lf` prints for a `.pub` line.
        private func fingerprint(of publicKey: String, _ server: SSHServer) throws -> String {
            let file = server.prefix.appendingPathComponent("fingerprint-\(UUID().uuidString.prefix(8)).pub")
            try Data(publicKey.utf8).write(to: file)
            let output = try SSHServer.run(try SSHServer.tool("ssh-keygen"), ["-l", "-E", "sha256", "-f", file.path])
            return String(output.split(separator: " ")[1])
        }

        /// A delegate that answers host-key challenges with `disposition` and records them.
        private func hostKeyDelegate(_ disposition: URLSession.AuthChallengeDisposition,
                                     seen: Locked<[URLAuthenticationChallenge]>) -> EventDelegate {
            EventDelegate(EventDelegate.Hooks(challenge: { _, challenge, answer in
                seen.withLock { $0.append(challenge) }
                if challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodSSHHostKey {
                    answer(disposition, nil)
                } else {
                    answer(.performDefaultHandling, nil)
                }
            }))
        }

        @Test func unknownHostFailsWithoutDelegate() async throws {
            let server = try await SFTPTest.server()
            let empty = try knownHosts(server, "")
            let session = SFTPTest.session(server) { $0.sshKnownHostsURL = empty }
            defer { session.finishTasksAndInvalidate() }
            let result = try await session.loadData(server.url(SSHServer.Files.hello, password: true))
            let error = try SFTPTest.urlError(result.error)
            #expect(error.code == .serverCertificateUntrusted)
            #expect(error.localizedDescription.contains("not known"))
        }

        @Test func acceptingAnUnknownHostKeyLastsForTheSession() async throws {
            let server = try await SFTPTest.server()
            let empty = try knownHosts(server, "")
            let seen = Locked<[URLAuthenticationChallenge]>([])
            let delegate = hostKeyDelegate(.useCredential, seen: seen)
            let session = SFTPTest.session(server, delegate: delegate) { $0.sshKnownHostsURL = empty }
            defer { session.finishTasksAndInvalidate() }
            let first = session.dataTask(with: server.url(SSHServer.Files.hello, password: true))
            try await SFTPTest.run(first, delegate)
            #expect(delegate.error(of: first) == nil)
            #expect(delegate.body(of: first) == SSHServer.Files.helloContents)

            let challenge = try #require(seen.current.first)
            let space = challenge.protectionSpace
            #expect(space.authenticationMethod == NSURLAuthenticationMethodSSHHostKey)
            #expect(space.host == "127.0.0.1")
            #expect(space.port == server.port)
            #expect(space.protocol == "sftp")
            #expect(space.sshHostKeyType == "ssh-ed25519")
            #expect(space.sshHostKeyFingerprint == (try fingerprint(of: server.hostKey, server)))
            #expect(space.realm == "ssh-ed25519 \(space.sshHostKeyFingerprint ?? "")")
            #expect(challenge.proposedCredential == nil)
            #expect((challenge.error as? URLError)?.code == .serverCertificateUntrusted)

            // A new connection in the same session trusts the accepted key without asking again.
            await SFTPTest.closeIdleConnections(of: session)
            let logins = server.acceptedLogins()
            let second = session.dataTask(with: server.url(SSHServer.Files.hello, password: true))
            try await SFTPTest.run(second, delegate)
            #expect(delegate.error(of: second) == nil)
            #expect(await server.waitForLogins(logins + 1), "the second task used a new connection")
            #expect(seen.current.count == 1)

            // Another session asks again: acceptance is not written anywhere.
            let otherDelegate = hostKeyDelegate(.performDefaultHandling, seen: Locked([]))
            let other = SFTPTest.session(server, delegate: otherDelegate) { $0.sshKnownHostsURL = empty }
            defer { other.finishTasksAndInvalidate() }
            let third = other.dataTask(with: server.url(SSHServer.Files.hello, password: true))
            try await SFTPTest.run(third, otherDelegate)
            #expect(try SFTPTest.urlError(otherDelegate.error(of: third)).code == .serverCertificateUntrusted)
            #expect((try String(contentsOf: empty, encoding: .utf8)).isEmpty)
        }

        @Test(arguments: [(URLSession.AuthChallengeDisposition.performDefaultHandling, URLError.Code.serverCertificateUntrusted),
                          (.rejectProtectionSpace, .serverCertificateUntrusted),
                          (.cancelAuthenticationChallenge, .cancelled)])
        func refusingTheHostKey(disposition: URLSession.AuthChallengeDisposition, expected: URLError.Code) async throws {
            let server = try await SFTPTest.server()
            let empty = try knownHosts(server, "")
            let seen = Locked<[URLAuthenticationChallenge]>([])
            let delegate = hostKeyDelegate(disposition, seen: seen)
            let session = SFTPTest.session(server, delegate: delegate) { $0.sshKnownHostsURL = empty }
            defer { session.finishTasksAndInvalidate() }
            let task = session.dataTask(with: server.url(SSHServer.Files.hello, password: true))
            try await SFTPTest.run(task, delegate)
            #expect(try SFTPTest.urlError(delegate.error(of: task)).code == expected)
            #expect(seen.current.count == 1)
            #expect(delegate.response(of: task) == nil)
        }

        @Test func tasksWaitingForOneConnectionShareItsChallenge() async throws {
            let server = try await SFTPTest.server()
            let empty = try knownHosts(server, "")
            let seen = Locked<[URLAuthenticationChallenge]>([])
            let delegate = hostKeyDelegate(.useCredential, seen: seen)
            let session = SFTPTest.session(server, delegate: delegate) { $0.sshKnownHostsURL = empty }
            defer { session.finishTasksAndInvalidate() }
            let tasks = (0..<3).map { _ in session.dataTask(with: server.url(SSHServer.Files.hello, password: true)) }
            for task in tasks { task.resume() }
            #expect(await delegate.waitForCompletions(3))
            for task in tasks {
                #expect(delegate.error(of: task) == nil)
                #expect(delegate.body(of: task) == SSHServer.Files.helloContents)
            }
            #expect(seen.current.count == 1)
        }

        @Test func cancellingTheTaskWhileTheDelegateDecides() async throws {
            let server = try await SFTPTest.server()
            let empty = try knownHosts(server, "")
            let pending = Locked<[@Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void]>([])
            let delegate = EventDelegate(EventDelegate.Hooks(challenge: { task, challenge, answer in
                if pending.withLock({ $0.isEmpty }) {
                    pending.withLock { $0.append(answer) }   // the first challenge is never answered in time
                } else {
                    answer(.useCredential, nil)
                }
            }))
            let session = SFTPTest.session(server, delegate: delegate) { $0.sshKnownHostsURL = empty }
            defer { session.finishTasksAndInvalidate() }
            let first = session.dataTask(with: server.url(SSHServer.Files.hello, password: true))
            first.resume()
            #expect(await waitUntil { !pending.current.isEmpty })
            first.cancel()
            #expect(await delegate.waitForCompletion(of: first))
            #expect(try SFTPTest.urlError(delegate.error(of: first)).code == .cancelled)
            pending.current.first?(.useCredential, nil)   // a late answer changes nothing

            let second = session.dataTask(with: server.url(SSHServer.Files.hello, password: true))
            try await SFTPTest.run(second, delegate)
            #expect(delegate.error(of: second) == nil)
            #expect(delegate.body(of: second) == SSHServer.Files.helloContents)
        }

        @Test func hashedKnownHostsEntry() async throws {
            let server = try await SFTPTest.server()
            let file = try knownHosts(server, "# a comment\n@cert-authority *.example ssh-ed25519 AAAA\n"
                                          + SSHServer.knownHostsLine(port: server.port, key: server.hostKey))
            try SSHServer.run(try SSHServer.tool("ssh-keygen"), ["-H", "-f", file.path])
            let hashed = try String(contentsOf: file, encoding: .utf8)
            #expect(hashed.contains("|1|"))
            #expect(!hashed.contains("127.0.0.1"))
            let session = SFTPTest.session(server) { $0.sshKnownHostsURL = file }
            defer { session.finishTasksAndInvalidate() }
            let result = try await session.loadData(server.url(SSHServer.Files.hello, password: true))
            #expect(result.error == nil)
            #expect(result.data == SSHServer.Files.helloContents)
        }

        @Test func aKeyForAnotherPortDoesNotCount() async throws {
            let server = try await SFTPTest.server()
            // OpenSSH records non-standard ports as [host]:port; a plain entry is port 22's.
            let file = try knownHosts(server, "127.0.0.1 \(server.hostKey)\n")
            let session = SFTPTest.session(server) { $0.sshKnownHostsURL = file }
            defer { session.finishTasksAndInvalidate() }
            let result = try await session.loadData(server.url(SSHServer.Files.hello, password: true))
            #expect(try SFTPTest.urlError(result.error).code == .serverCertificateUntrusted)
        }

        @Test func aChangedHostKeyIsNeverAcceptedSilently() async throws {
            let server = try await SFTPTest.server()
            let original = try server.makeHostKey("host_changing_a")
            let replacement = try server.makeHostKey("host_changing_b")
            var instance = try server.launchInstance(name: "changing", hostKeyFile: original.file)
            defer { instance.stop() }
            let port = instance.port
            let file = try knownHosts(server, SSHServer.knownHostsLine(port: port, key: original.publicKey))

            // First session: the recorded key, no challenge.
            let quiet = Locked<[URLAuthenticationChallenge]>([])
            let firstDelegate = hostKeyDelegate(.performDefaultHandling, seen: quiet)
            let first = SFTPTest.session(server, delegate: firstDelegate) { $0.sshKnownHostsURL = file }
            let firstTask = first.dataTask(with: server.url(SSHServer.Files.hello, password: true, port: port))
            try await SFTPTest.run(firstTask, firstDelegate)
            first.finishTasksAndInvalidate()
            #expect(firstDelegate.error(of: firstTask) == nil)
            #expect(quiet.current.isEmpty)

            // The server comes back on the same port with another key.
            instance.stop()
            instance = try server.launchInstance(name: "changing", hostKeyFile: replacement.file, port: port)

            let refused = Locked<[URLAuthenticationChallenge]>([])
            let secondDelegate = hostKeyDelegate(.performDefaultHandling, seen: refused)
            let second = SFTPTest.session(server, delegate: secondDelegate) { $0.sshKnownHostsURL = file }
            defer { second.finishTasksAndInvalidate() }
            let secondTask = second.dataTask(with: server.url(SSHServer.Files.hello, password: true, port: port))
            try await SFTPTest.run(secondTask, secondDelegate)
            let error = try SFTPTest.urlError(secondDelegate.error(of: secondTask))
            #expect(error.code == .serverCertificateUntrusted)
            #expect(error.localizedDescription.contains("changed"))
            let challenge = try #require(refused.current.first)
            #expect(challenge.protectionSpace.sshHostKeyFingerprint == (try fingerprint(of: replacement.publicKey, server)))
            #expect(challenge.error?.localizedDescription.contains("changed") == true)

            // Only an explicit acceptance lets it through.
            let accepting = hostKeyDelegate(.useCredential, seen: Locked([]))
            let third = SFTPTest.session(server, delegate: accepting) { $0.sshKnownHostsURL = file }
            defer { third.finishTasksAndInvalidate() }
            let thirdTask = third.dataTask(with: server.url(SSHServer.Files.hello, password: true, port: port))
            try await SFTPTest.run(thirdTask, accepting)
            #expect(accepting.error(of: thirdTask) == nil)
            #expect(accepting.body(of: thirdTask) == SSHServer.Files.helloContents)
        }
    }
}
