import Foundation

/// Decides whether a server's host key is trusted, the way OpenSSH's `StrictHostKeyChecking` does:
/// a key recorded for the host in the known-hosts files (or accepted earlier in the session) is
/// trusted; a key listed on an `@revoked` line for the host is refused; a host with recorded keys
/// none of which is the presented one has a *changed* key — also when the recorded keys are of
/// another type — and is refused; a host with nothing recorded is unknown. Changed and revoked keys
/// are refused outright, as OpenSSH refuses them: no challenge answer can accept them.
enum SSHHostKeyVerification {
    enum Verdict: Equatable {
        case trusted
        case unknown
        /// Changed or revoked: the description says which, and what to fix.
        case refused(String)
    }

    /// The files read when the configuration names none: the user's (when there is one) and the system's.
    static func defaultFiles(user: URL?) -> [URL] {
        (user.map { [$0] } ?? []) + [URL(fileURLWithPath: "/etc/ssh/ssh_known_hosts")]
    }

    /// The verdict on `key` for the server `name` (``SSHConnectionKey/knownHostsName``).
    static func verdict(for key: SSHHostKey, name: String, recorded: SSHRecordedHostKeys,
                        accepted: SSHAcceptedHostKeys) -> Verdict {
        if let revoked = recorded.revoked.first(where: { $0.key == key.blob }) {
            return .refused("The host key of \(name) (\(key.type) \(key.fingerprint)) is revoked: \(revoked.location) lists it "
                + "as @revoked. Courier never accepts a revoked key.")
        }
        if recorded.keys.contains(where: { $0.key == key.blob }) || accepted.contains(key, for: name) { return .trusted }
        if !recorded.keys.isEmpty {
            let sameType = recorded.keys.filter { $0.keyType == key.type }
            let what = sameType.isEmpty
                ? "only \(recorded.keyTypes.joined(separator: ", ")) keys"
                : "a different \(key.type) key"
            return .refused(changed(name, key, recorded: what, records: sameType.isEmpty ? recorded.keys : sameType))
        }
        if !accepted.keys(for: name).isEmpty {
            return .refused("The host key of \(name) has changed: it is now \(key.type) \(key.fingerprint), which differs from "
                + "the key accepted for it earlier in this session. Someone could be intercepting the connection.")
        }
        return .unknown
    }

    /// Why a handshake limited to the key types recorded for `name` failed: the server offers none
    /// of them.
    static func noRecordedTypeOffered(name: String, keyTypes: [String], recorded: SSHRecordedHostKeys) -> String {
        let types = keyTypes.joined(separator: ", ")
        let records = recorded.keys.isEmpty ? "accepted earlier in this session" : "recorded in " + locations(recorded.keys)
        return "The host key of \(name) has changed: the server offers none of the key types known for it (\(types), \(records)). "
            + "Someone could be intercepting the connection (a man-in-the-middle attack), or the server's keys were replaced. "
            + fix(name, recorded.keys)
    }

    /// The libssh2 host-key methods (`LIBSSH2_METHOD_HOSTKEY`) for `keyTypes`, most preferred first
    /// (OpenSSH's order), so that the server must present a key of a recorded type; `nil` when
    /// none of the types is one libssh2 can negotiate (then nothing is restricted, and a key of
    /// another type ends as changed). Names this libssh2 does not know are dropped by libssh2.
    static func hostKeyMethods(for keyTypes: [String]) -> String? {
        let methods = methodOrder.filter { keyTypes.contains($0.keyType) }.flatMap(\.methods)
        return methods.isEmpty ? nil : methods.joined(separator: ",")
    }

    private static let methodOrder: [(keyType: String, methods: [String])] = [
        ("ssh-ed25519", ["ssh-ed25519"]),
        ("ecdsa-sha2-nistp256", ["ecdsa-sha2-nistp256"]),
        ("ecdsa-sha2-nistp384", ["ecdsa-sha2-nistp384"]),
        ("ecdsa-sha2-nistp521", ["ecdsa-sha2-nistp521"]),
        // An RSA key is recorded as `ssh-rsa` whatever hash its signatures use.
        ("ssh-rsa", ["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"]),
        ("ssh-dss", ["ssh-dss"]),
    ]

    private static func changed(_ name: String, _ key: SSHHostKey, recorded what: String, records: [SSHRecordedHostKeys.Record]) -> String {
        "The host key of \(name) has changed: the server presented \(key.type) \(key.fingerprint), but \(locations(records)) "
            + "records \(what) for it. Someone could be intercepting the connection (a man-in-the-middle attack), or the "
            + "server's key was replaced. " + fix(name, records)
    }

    private static func fix(_ name: String, _ records: [SSHRecordedHostKeys.Record]) -> String {
        guard let first = records.first else { return "Courier refuses changed host keys." }
        return "Courier refuses changed host keys: if the change is expected, remove the old entry "
            + "(`ssh-keygen -R '\(name)' -f \(first.file.path)`) and connect again."
    }

    private static func locations(_ records: [SSHRecordedHostKeys.Record]) -> String {
        records.map(\.location).joined(separator: ", ")
    }
}
