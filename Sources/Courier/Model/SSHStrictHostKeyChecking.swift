import Foundation

/// How `sftp:` loads treat a server whose host key is not in the known-hosts files, after OpenSSH's
/// `StrictHostKeyChecking` option (see ``URLSessionConfiguration/sshStrictHostKeyChecking``).
///
/// Whatever the setting, a key recorded for the host is trusted silently, a host recorded with
/// another key (a *changed* key, including a key of another type) is refused, and a key listed on
/// an `@revoked` line is refused; neither can be accepted by a challenge answer.
public enum SSHStrictHostKeyChecking: Sendable, Hashable {
    /// OpenSSH's `StrictHostKeyChecking=yes`, the default: an unknown host raises an
    /// `NSURLAuthenticationMethodSSHHostKey` challenge and is refused unless the delegate answers
    /// `.useCredential` with `URLCredential(sshHostKeyFingerprint:)` naming the presented key.
    /// Nothing is written.
    case yes

    /// OpenSSH's `StrictHostKeyChecking=accept-new`: an unknown host's key is recorded in the
    /// user's known-hosts file (``URLSessionConfiguration/sshKnownHostsURL``, else
    /// `~/.ssh/known_hosts`) and trusted without asking the delegate. A changed key is still
    /// refused. When the file cannot be written safely (a symbolic link, another owner, writable by
    /// group or others), nothing is recorded and the host is treated as with ``yes``.
    case acceptNew
}
