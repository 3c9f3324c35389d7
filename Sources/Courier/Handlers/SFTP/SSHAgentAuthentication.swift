internal import CSSH2
import Foundation

/// Public-key authentication through an ssh-agent: tries each identity the agent holds, in the
/// agent's order, until the server accepts one. Used on the event-loop thread only.
final class SSHAgentAuthentication {
    enum Step {
        /// A call would block: wait for the socket.
        case again
        /// The identity was refused; the next one is ready: step again now.
        case next
        case authenticated
        /// Every identity was refused (or the agent holds none).
        case exhausted
        /// The session failed (not just this identity): the `LIBSSH2_ERROR_…` code.
        case failed(Int32)
    }

    private let agent: OpaquePointer
    private var identity: UnsafeMutablePointer<libssh2_agent_publickey>?
    private var started = false
    private var finished = false

    /// Connects to the agent at `socketPath` and lists its identities; `nil` when there is no agent
    /// there (the local socket is fast, so these calls block only briefly).
    init?(session: OpaquePointer, socketPath: String) {
        guard let agent = libssh2_agent_init(session) else { return nil }
        libssh2_agent_set_identity_path(agent, socketPath)
        guard libssh2_agent_connect(agent) == 0 else {
            libssh2_agent_free(agent)
            return nil
        }
        guard libssh2_agent_list_identities(agent) == 0 else {
            libssh2_agent_disconnect(agent)
            libssh2_agent_free(agent)
            return nil
        }
        self.agent = agent
    }

    deinit {
        // Not after the process's exit handlers ran (see SSHConnection's deinit).
        guard SSHLibrary.exitGate.enter() else { return }
        defer { SSHLibrary.exitGate.leave() }
        libssh2_agent_disconnect(agent)
        libssh2_agent_free(agent)
    }

    /// Tries the current identity (or moves to the next one).
    func step(user: String) -> Step {
        if finished { return .exhausted }
        if !started || identity == nil {
            guard advance() else { return .exhausted }
        }
        guard let current = identity else { return .exhausted }
        let result = libssh2_agent_userauth(agent, user, current)
        switch result {
        case 0:
            return .authenticated
        case LIBSSH2_ERROR_EAGAIN:
            return .again
        case LIBSSH2_ERROR_AUTHENTICATION_FAILED, LIBSSH2_ERROR_PUBLICKEY_UNVERIFIED, LIBSSH2_ERROR_AGENT_PROTOCOL,
             LIBSSH2_ERROR_METHOD_NOT_SUPPORTED:
            return advance() ? .next : .exhausted
        default:
            return .failed(result)
        }
    }

    /// Moves to the next identity; `false` at the end.
    private func advance() -> Bool {
        var next: UnsafeMutablePointer<libssh2_agent_publickey>?
        let result = libssh2_agent_get_identity(agent, &next, started ? identity : nil)
        started = true
        guard result == 0, let next else {
            finished = true
            identity = nil
            return false
        }
        identity = next
        return true
    }
}
