internal import CSSH2
import Foundation

/// Decides whether the host field of a known-hosts entry names a server, as OpenSSH's
/// `match_hostname` does.
///
/// The server's name is `host` on port 22 and `[host]:port` elsewhere (``SSHConnectionKey/knownHostsName``).
/// A plain field is a comma-separated list of patterns (`*` any run of characters, `?` one
/// character, compared without case); a pattern starting with `!` that matches excludes the name
/// even when another pattern matches it. A hashed field (`|1|base64-salt|base64-hash`, `ssh-keygen
/// -H`) is the HMAC-SHA1 of the name keyed with the salt; libssh2's known-host functions compute it,
/// through a scratch libssh2 session made on first need. Not for concurrent use.
final class KnownHostsHostMatcher {
    private var scratchSession: OpaquePointer?

    deinit {
        if let scratchSession { libssh2_session_free(scratchSession) }
    }

    /// Whether `hosts` (an entry's host field) names `name`.
    func matches(_ hosts: String, name: String) -> Bool {
        if hosts.hasPrefix("|1|") { return Self.isWellFormedHash(hosts) && matchesHashed(hosts, name: name) }
        let name = Array(name.lowercased().unicodeScalars)
        var matched = false
        for pattern in hosts.lowercased().split(separator: ",") {
            if pattern.hasPrefix("!") {
                if Self.wildcardMatch(Array(pattern.dropFirst().unicodeScalars)[...], name[...]) { return false }
            } else if !matched {
                matched = Self.wildcardMatch(Array(pattern.unicodeScalars)[...], name[...])
            }
        }
        return matched
    }

    /// `*` and `?` matching, iterative (no recursion depth an attacker could grow).
    static func wildcardMatch(_ pattern: ArraySlice<Unicode.Scalar>, _ text: ArraySlice<Unicode.Scalar>) -> Bool {
        var p = pattern.startIndex, t = text.startIndex
        var star: Int?, starText = text.startIndex
        while t < text.endIndex {
            if p < pattern.endIndex, pattern[p] == "?" || pattern[p] == text[t] {
                p += 1
                t += 1
            } else if p < pattern.endIndex, pattern[p] == "*" {
                star = p
                starText = t
                p += 1
            } else if let star {
                p = star + 1
                starText += 1
                t = starText
            } else {
                return false
            }
        }
        while p < pattern.endIndex, pattern[p] == "*" { p += 1 }
        return p == pattern.endIndex
    }

    /// Whether a hashed field is `|1|salt|hash` with a 20-byte salt and a 20-byte hash (HMAC-SHA1),
    /// in base64: the only form OpenSSH matches. Anything else names no host, and never reaches
    /// libssh2, which leaks an HMAC context each time it checks a hash of another length.
    static func isWellFormedHash(_ hosts: String) -> Bool {
        let parts = hosts.dropFirst(3).split(separator: "|", omittingEmptySubsequences: false)
        return parts.count == 2 && parts.allSatisfy { Data(base64Encoded: String($0))?.count == 20 }
    }

    /// An ed25519 key blob that stands in for the entry's key: only the name is compared.
    private static let placeholderKey: Data = {
        var blob = Data([0, 0, 0, 11]) + Data("ssh-ed25519".utf8)
        blob += Data([0, 0, 0, 32]) + Data(repeating: 0x43, count: 32)
        return blob
    }()

    private func matchesHashed(_ hosts: String, name: String) -> Bool {
        guard let session = session(), let collection = libssh2_knownhost_init(session) else { return false }
        defer { libssh2_knownhost_free(collection) }
        let key = Self.placeholderKey
        let line = "\(hosts) ssh-ed25519 \(key.base64EncodedString())"
        let read = line.withCString { libssh2_knownhost_readline(collection, $0, strlen($0), LIBSSH2_KNOWNHOST_FILE_OPENSSH) }
        guard read == 0 else { return false }
        let typeMask = LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW | LIBSSH2_KNOWNHOST_KEY_ED25519
        let result = key.withUnsafeBytes { raw -> Int32 in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: CChar.self) else { return LIBSSH2_KNOWNHOST_CHECK_FAILURE }
            // Port -1: the name already is `host` or `[host]:port`.
            return libssh2_knownhost_checkp(collection, name.lowercased(), -1, base, raw.count, typeMask, nil)
        }
        return result == LIBSSH2_KNOWNHOST_CHECK_MATCH
    }

    private func session() -> OpaquePointer? {
        if let scratchSession { return scratchSession }
        guard SSHLibrary.isInitialized else { return nil }
        scratchSession = courier_ssh2_session_init()
        return scratchSession
    }
}
