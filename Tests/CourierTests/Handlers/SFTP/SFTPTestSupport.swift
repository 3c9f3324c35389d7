import Foundation
import Testing
@testable import Courier

/// The parent of the sftp suites. `.serialized`: the tests share one sshd and count its logins.
/// They need root (sshd checks passwords against the system's accounts, and the tests set the test
/// account's password): run as another user, they are skipped with that reason.
@Suite(.serialized, .enabled(if: getuid() == 0, "the sftp tests run sshd with password logins, which needs root"))
struct SFTPTests {}

/// Helpers shared by the sftp handler tests (namespaced so they cannot clash with other helpers).
enum SFTPTest {
    /// The process's sshd (started on first use).
    static func server() async throws -> SSHServer { try await SSHServer.shared() }

    /// A new ephemeral session that trusts the test server's host key (its known-hosts file) and
    /// has no agent and no default identity files, so only what a test gives is tried.
    static func session(_ server: SSHServer, delegate: (any URLSessionDelegate)? = nil,
                        configure: (URLSessionConfiguration) -> Void = { _ in }) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.sshKnownHostsURL = server.knownHosts
        configuration.sshUserEnvironment = SSHUserEnvironment(agentSocketPath: nil, identityDirectory: nil)
        configure(configuration)
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    /// A delegate answering password challenges with the test user's password, and nothing else.
    static func passwordDelegate(_ server: SSHServer, _ hooks: EventDelegate.Hooks = EventDelegate.Hooks()) -> EventDelegate {
        var hooks = hooks
        hooks.challenge = { _, challenge, answer in
            if challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodDefault,
               challenge.protectionSpace.protocol == "sftp" {
                answer(.useCredential, URLCredential(user: SSHServer.user, password: server.password, persistence: .none))
            } else {
                answer(.performDefaultHandling, nil)
            }
        }
        return EventDelegate(hooks)
    }

    /// A delegate answering password challenges with `credential`.
    static func credentialDelegate(_ credential: URLCredential, seen: Locked<[URLAuthenticationChallenge]>? = nil) -> EventDelegate {
        EventDelegate(EventDelegate.Hooks(challenge: { _, challenge, answer in
            seen?.withLock { $0.append(challenge) }
            if challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodDefault {
                answer(.useCredential, credential)
            } else {
                answer(.performDefaultHandling, nil)
            }
        }))
    }

    /// The `URLError` of a completion, recording an issue when there is none.
    static func urlError(_ error: (any Error)?, sourceLocation: SourceLocation = #_sourceLocation) throws -> URLError {
        try #require(error as? URLError, "expected a URLError, got \(String(describing: error))", sourceLocation: sourceLocation)
    }

    /// Runs a delegate-driven task to completion (bounded).
    static func run(_ task: URLSessionTask, _ delegate: EventDelegate, timeout: TimeInterval = 20) async throws {
        task.resume()
        guard await delegate.waitForCompletion(of: task, timeout: timeout) else {
            task.cancel()
            throw TestTimeout(what: "task \(task.taskIdentifier) for \(task.originalRequest?.url?.absoluteString ?? "?")")
        }
    }

    /// Closes the session's idle SSH connections, so the next load connects again.
    static func closeIdleConnections(of session: URLSession) async {
        session.environment.resources.resource(SSHEventLoop.resourceKey) { nil as SSHEventLoop? }?.closeIdleConnections()
        await settle(0.3)
    }

    /// `count` random bytes.
    static func randomBytes(_ count: Int) throws -> Data {
        try HTTPTest.randomBytes(count)
    }

    /// A fresh file name in the uploads directory.
    static func uploadName(_ stem: String) -> String {
        "\(SSHServer.Files.uploads)/\(stem)-\(UUID().uuidString).bin"
    }
}
