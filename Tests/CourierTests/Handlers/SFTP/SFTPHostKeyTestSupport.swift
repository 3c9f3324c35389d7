import Foundation
import Testing
@testable import Courier

/// Helpers shared by the host-key suites.
extension SFTPTest {
    /// A new known-hosts file in the server's directory holding `lines`.
    static func knownHosts(_ server: SSHServer, _ lines: String) throws -> URL {
        let file = server.prefix.appendingPathComponent("known_hosts_\(UUID().uuidString.prefix(8))")
        try Data(lines.utf8).write(to: file)
        return file
    }

    /// The SHA-256 fingerprint `ssh-keygen -lf` prints for a `.pub` line.
    static func fingerprint(of publicKey: String, _ server: SSHServer) throws -> String {
        let file = server.prefix.appendingPathComponent("fingerprint-\(UUID().uuidString.prefix(8)).pub")
        try Data(publicKey.utf8).write(to: file)
        let output = try SSHServer.run(try SSHServer.tool("ssh-keygen"), ["-l", "-E", "sha256", "-f", file.path])
        return String(output.split(separator: " ")[1])
    }

    /// A delegate that records every challenge and answers host-key challenges with `answer`
    /// (others with default handling).
    static func hostKeyDelegate(seen: Locked<[URLAuthenticationChallenge]>,
                                answer: @escaping @Sendable (URLAuthenticationChallenge)
                                    -> (URLSession.AuthChallengeDisposition, URLCredential?)) -> EventDelegate {
        EventDelegate(EventDelegate.Hooks(challenge: { _, challenge, complete in
            seen.withLock { $0.append(challenge) }
            if challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodSSHHostKey {
                let (disposition, credential) = answer(challenge)
                complete(disposition, credential)
            } else {
                complete(.performDefaultHandling, nil)
            }
        }))
    }

    /// A delegate answering host-key challenges with `disposition` and no credential.
    static func hostKeyDelegate(_ disposition: URLSession.AuthChallengeDisposition,
                                seen: Locked<[URLAuthenticationChallenge]>) -> EventDelegate {
        hostKeyDelegate(seen: seen) { _ in (disposition, nil) }
    }

    /// A delegate that accepts whatever host key it is asked about, the one explicit way: with
    /// `URLCredential(sshHostKeyFingerprint:)` naming the challenge's key.
    static func acceptingHostKeyDelegate(seen: Locked<[URLAuthenticationChallenge]> = Locked([])) -> EventDelegate {
        hostKeyDelegate(seen: seen) { challenge in (.useCredential, acceptance(of: challenge)) }
    }

    /// The credential that accepts the key `challenge` is about.
    static func acceptance(of challenge: URLAuthenticationChallenge) -> URLCredential {
        URLCredential(sshHostKeyFingerprint: challenge.protectionSpace.sshHostKeyFingerprint ?? "")
    }

    /// Runs a task for hello.txt on the sshd at `port` (the main one when nil) in a new session with
    /// `delegate`, configured by `configure`; the finished task.
    static func loadHello(_ server: SSHServer, port: Int? = nil, delegate: EventDelegate,
                          configure: (URLSessionConfiguration) -> Void) async throws -> URLSessionTask {
        let session = SFTPTest.session(server, delegate: delegate, configure: configure)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url(SSHServer.Files.hello, password: true, port: port))
        try await SFTPTest.run(task, delegate)
        return task
    }

    /// The host-key challenges among `challenges`.
    static func hostKeyChallenges(_ challenges: [URLAuthenticationChallenge]) -> [URLAuthenticationChallenge] {
        challenges.filter { $0.protectionSpace.authenticationMethod == NSURLAuthenticationMethodSSHHostKey }
    }
}
