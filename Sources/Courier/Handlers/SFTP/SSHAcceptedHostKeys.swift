import Foundation

/// The host keys the delegate accepted in one session (answering an
/// `NSURLAuthenticationMethodSSHHostKey` challenge with `.useCredential`), by known-hosts name.
/// Kept in memory only: the known-hosts file is never written. Used on the event-loop thread only.
final class SSHAcceptedHostKeys {
    private var keys: [String: Set<Data>] = [:]

    func accept(_ key: SSHHostKey, for name: String) {
        keys[name, default: []].insert(key.blob)
    }

    func contains(_ key: SSHHostKey, for name: String) -> Bool {
        keys[name]?.contains(key.blob) ?? false
    }

    func hasAnyKey(for name: String) -> Bool {
        !(keys[name]?.isEmpty ?? true)
    }
}
