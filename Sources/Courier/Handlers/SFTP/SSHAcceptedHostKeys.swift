import Foundation

/// The host keys one session trusts beyond the known-hosts files, by known-hosts name: keys the
/// delegate accepted with `URLCredential(sshHostKeyFingerprint:)`, and keys `.acceptNew` recorded.
/// Kept in memory for the session. Used on the event-loop thread only.
final class SSHAcceptedHostKeys {
    private var keys: [String: [SSHHostKey]] = [:]

    func accept(_ key: SSHHostKey, for name: String) {
        guard !contains(key, for: name) else { return }
        keys[name, default: []].append(key)
    }

    func contains(_ key: SSHHostKey, for name: String) -> Bool {
        keys[name]?.contains { $0.blob == key.blob } ?? false
    }

    /// The keys accepted for `name`, in the order they were accepted.
    func keys(for name: String) -> [SSHHostKey] {
        keys[name] ?? []
    }
}
