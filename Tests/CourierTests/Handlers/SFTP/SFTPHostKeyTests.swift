import Foundation
import Testing
@testable import Courier

/// Host-key checking as OpenSSH's StrictHostKeyChecking: known keys (plain and hashed entries)
/// pass silently, an unknown key raises an `NSURLAuthenticationMethodSSHHostKey` challenge that only
/// `URLCredential(sshHostKeyFingerprint:)` naming the key accepts. Changed, revoked and substituted
/// keys: `SFTPHostKeyRecordTests`; accept-new: `SFTPAcceptNewTests`.
extension SFTPTests {
    @Suite("SFTP host keys")
    struct HostKeyTests {
        @Test func unknownHostFailsWithoutDelegate() async throws {
            let server = try await SFTPTest.server()
            let empty = try SFTPTest.knownHosts(server, "")
            let session = SFTPTest.session(server) { $0.sshKnownHostsURL = empty }
            defer { session.finishTasksAndInvalidate() }
            let result = try await session.loadData(server.url(SSHServer.Files.hello, password: true))
            let error = try SFTPTest.urlError(result.error)
            #expect(error.code == .serverCertificateUntrusted)
            #expect(error.localizedDescription.contains("not known"))
        }

        @Test func acceptingAnUnknownHostKeyLastsForTheSession() async throws {
            let server = try await SFTPTest.server()
            let empty = try SFTPTest.knownHosts(server, "")
            let seen = Locked<[URLAuthenticationChallenge]>([])
            let delegate = SFTPTest.acceptingHostKeyDelegate(seen: seen)
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
            #expect(space.sshHostKeyFingerprint == (try SFTPTest.fingerprint(of: server.hostKey, server)))
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
            let otherDelegate = SFTPTest.hostKeyDelegate(.performDefaultHandling, seen: Locked([]))
            let other = SFTPTest.session(server, delegate: otherDelegate) { $0.sshKnownHostsURL = empty }
            defer { other.finishTasksAndInvalidate() }
            let third = other.dataTask(with: server.url(SSHServer.Files.hello, password: true))
            try await SFTPTest.run(third, otherDelegate)
            #expect(try SFTPTest.urlError(otherDelegate.error(of: third)).code == .serverCertificateUntrusted)
            #expect((try String(contentsOf: empty, encoding: .utf8)).isEmpty)
        }

        /// The answers to an unknown key's challenge that are not the explicit acceptance.
        enum Refusal: String, CaseIterable, Sendable {
            case nilCredential, proposedCredential, senderContinueWithoutCredential, passwordCredential,
                 otherKeyFingerprint, fingerprintWithoutPrefix, performDefaultHandling, rejectProtectionSpace, cancel

            var expected: URLError.Code { self == .cancel ? .cancelled : .serverCertificateUntrusted }

            /// Answers `challenge` this way.
            func answer(_ challenge: URLAuthenticationChallenge,
                        _ complete: @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
                let fingerprint = challenge.protectionSpace.sshHostKeyFingerprint ?? ""
                switch self {
                case .nilCredential: complete(.useCredential, nil)
                case .proposedCredential: complete(.useCredential, challenge.proposedCredential)
                case .senderContinueWithoutCredential:
                    // The sender takes the first answer only: the accepting one after it is ignored.
                    challenge.sender?.continueWithoutCredential(for: challenge)
                    complete(.useCredential, SFTPTest.acceptance(of: challenge))
                case .passwordCredential:
                    complete(.useCredential, URLCredential(user: SSHServer.user, password: fingerprint, persistence: .none))
                case .otherKeyFingerprint:
                    complete(.useCredential, URLCredential(sshHostKeyFingerprint: "SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s"))
                case .fingerprintWithoutPrefix:
                    complete(.useCredential, URLCredential(sshHostKeyFingerprint: String(fingerprint.dropFirst("SHA256:".count))))
                case .performDefaultHandling: complete(.performDefaultHandling, nil)
                case .rejectProtectionSpace: complete(.rejectProtectionSpace, nil)
                case .cancel: complete(.cancelAuthenticationChallenge, nil)
                }
            }
        }

        @Test(arguments: Refusal.allCases)
        func refusingTheHostKey(_ refusal: Refusal) async throws {
            let server = try await SFTPTest.server()
            let empty = try SFTPTest.knownHosts(server, "")
            let seen = Locked<[URLAuthenticationChallenge]>([])
            let delegate = EventDelegate(EventDelegate.Hooks(challenge: { _, challenge, complete in
                seen.withLock { $0.append(challenge) }
                if challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodSSHHostKey {
                    refusal.answer(challenge, complete)
                } else {
                    complete(.performDefaultHandling, nil)
                }
            }))
            let session = SFTPTest.session(server, delegate: delegate) { $0.sshKnownHostsURL = empty }
            defer { session.finishTasksAndInvalidate() }
            let logins = server.acceptedLogins()
            let task = session.dataTask(with: server.url(SSHServer.Files.hello, password: true))
            try await SFTPTest.run(task, delegate)
            #expect(try SFTPTest.urlError(delegate.error(of: task)).code == refusal.expected)
            #expect(seen.current.count == 1)
            #expect(delegate.response(of: task) == nil)
            #expect(await server.waitForLogins(logins), "no login after a refused host key")
        }

        @Test func tasksWaitingForOneConnectionShareItsChallenge() async throws {
            let server = try await SFTPTest.server()
            let empty = try SFTPTest.knownHosts(server, "")
            let seen = Locked<[URLAuthenticationChallenge]>([])
            let delegate = SFTPTest.acceptingHostKeyDelegate(seen: seen)
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
            let empty = try SFTPTest.knownHosts(server, "")
            let pending = Locked<[@Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void]>([])
            let acceptance = Locked<URLCredential?>(nil)
            let delegate = EventDelegate(EventDelegate.Hooks(challenge: { task, challenge, answer in
                if pending.withLock({ $0.isEmpty }) {
                    acceptance.withLock { $0 = SFTPTest.acceptance(of: challenge) }
                    pending.withLock { $0.append(answer) }   // the first challenge is never answered in time
                } else {
                    answer(.useCredential, SFTPTest.acceptance(of: challenge))
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
            pending.current.first?(.useCredential, acceptance.current)   // a late answer changes nothing

            let second = session.dataTask(with: server.url(SSHServer.Files.hello, password: true))
            try await SFTPTest.run(second, delegate)
            #expect(delegate.error(of: second) == nil)
            #expect(delegate.body(of: second) == SSHServer.Files.helloContents)
        }

        @Test func hashedKnownHostsEntry() async throws {
            let server = try await SFTPTest.server()
            let file = try SFTPTest.knownHosts(server, "# a comment\n@cert-authority *.example ssh-ed25519 AAAA\n"
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
            let file = try SFTPTest.knownHosts(server, "127.0.0.1 \(server.hostKey)\n")
            let session = SFTPTest.session(server) { $0.sshKnownHostsURL = file }
            defer { session.finishTasksAndInvalidate() }
            let result = try await session.loadData(server.url(SSHServer.Files.hello, password: true))
            #expect(try SFTPTest.urlError(result.error).code == .serverCertificateUntrusted)
        }
    }
}
