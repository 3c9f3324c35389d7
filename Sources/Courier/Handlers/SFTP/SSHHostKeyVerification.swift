internal import CSSH2
import Foundation

/// Decides whether a server's host key is trusted, the way OpenSSH's `StrictHostKeyChecking=yes`
/// does: a key recorded for the host in the known-hosts file is trusted, a host with no recorded key
/// is unknown, and a host recorded with another key of the same type has a *changed* key. Keys the
/// delegate accepted earlier in the session are trusted too; a host that presents a different key
/// from the one accepted counts as changed.
enum SSHHostKeyVerification {
    enum Verdict: Equatable {
        case trusted
        case unknown
        case changed
    }

    /// The files read when the configuration names none: the user's and the system's.
    static func defaultFiles() -> [URL] {
        var files: [URL] = []
        let home = ProcessInfo.processInfo.environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        if !home.isEmpty {
            files.append(URL(fileURLWithPath: home).appendingPathComponent(".ssh/known_hosts"))
        }
        files.append(URL(fileURLWithPath: "/etc/ssh/ssh_known_hosts"))
        return files
    }

    /// The verdict on `key` for the server `name` (``SSHConnectionKey/knownHostsName``).
    static func verdict(for key: SSHHostKey, name: String, accepted: SSHAcceptedHostKeys,
                        knownHostsFiles: [URL], session: OpaquePointer) -> Verdict {
        if accepted.contains(key, for: name) { return .trusted }
        let recorded = check(key, name: name, files: knownHostsFiles, session: session)
        switch recorded {
        case .trusted: return .trusted
        case .changed: return .changed
        case .unknown: return accepted.hasAnyKey(for: name) ? .changed : .unknown
        }
    }

    /// Looks `key` up in the known-hosts files. Lines libssh2 cannot parse (certificate authorities,
    /// revoked keys, key types it does not know) are skipped, as OpenSSH skips what does not apply.
    private static func check(_ key: SSHHostKey, name: String, files: [URL], session: OpaquePointer) -> Verdict {
        guard let hosts = libssh2_knownhost_init(session) else { return .unknown }
        defer { libssh2_knownhost_free(hosts) }
        for file in files {
            guard let text = try? String(contentsOf: file, encoding: .utf8) else { continue }
            for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.isEmpty || trimmed.hasPrefix("#") || trimmed.hasPrefix("@") { continue }
                _ = trimmed.withCString { libssh2_knownhost_readline(hosts, $0, strlen($0), LIBSSH2_KNOWNHOST_FILE_OPENSSH) }
            }
        }
        let typeMask = LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW | key.knownHostKeyBits
        let result = key.blob.withUnsafeBytes { raw -> Int32 in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: CChar.self) else { return LIBSSH2_KNOWNHOST_CHECK_FAILURE }
            // Port -1: the name already is `host` or `[host]:port`, exactly as OpenSSH records it.
            return libssh2_knownhost_checkp(hosts, name, -1, base, raw.count, typeMask, nil)
        }
        switch result {
        case LIBSSH2_KNOWNHOST_CHECK_MATCH: return .trusted
        case LIBSSH2_KNOWNHOST_CHECK_MISMATCH: return .changed
        default: return .unknown
        }
    }
}
