import Foundation

/// Where an SSH client finds what its user set up: the agent (`SSH_AUTH_SOCK`), the directory of
/// default identity files (`~/.ssh`) and the user's known-hosts file (`~/.ssh/known_hosts`). The
/// `sftp:` handler uses the first two when a load has no credential, the file when the configuration
/// names no known-hosts file.
struct SSHUserEnvironment: Sendable, Hashable {
    /// The agent's socket; `nil` for no agent.
    var agentSocketPath: String?
    /// The directory holding `id_ed25519`, `id_ecdsa` and `id_rsa`; `nil` for none.
    var identityDirectory: URL?
    /// The user's known-hosts file, read (with the system's) and written by `.acceptNew` when the
    /// configuration names none; `nil` for none.
    var userKnownHostsFile: URL? = nil

    /// This process's: `$SSH_AUTH_SOCK`, and `.ssh` in `$HOME` (or the account's home directory).
    static var process: SSHUserEnvironment {
        let environment = ProcessInfo.processInfo.environment
        let socket = environment["SSH_AUTH_SOCK"].flatMap { $0.isEmpty ? nil : $0 }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        let directory = home.isEmpty ? nil : URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(".ssh", isDirectory: true)
        return SSHUserEnvironment(agentSocketPath: socket, identityDirectory: directory,
                                  userKnownHostsFile: directory?.appendingPathComponent("known_hosts"))
    }
}
