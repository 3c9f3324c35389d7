internal import CSSH2
import Foundation

/// A server's SSH host key as the handshake presented it.
struct SSHHostKey: Sendable, Hashable {
    /// The public key blob (SSH wire format).
    let blob: Data
    /// The key type the blob names: `ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`, …
    let type: String
    /// The SHA-256 fingerprint as OpenSSH prints it: `SHA256:` and unpadded base64.
    let fingerprint: String
    /// The `LIBSSH2_KNOWNHOST_KEY_…` bits for the type, for known-hosts look-ups.
    let knownHostKeyBits: Int32

    /// The key `session` received in its handshake; `nil` before the handshake.
    init?(of session: OpaquePointer) {
        var length = 0
        var kind: Int32 = 0
        guard let raw = libssh2_session_hostkey(session, &length, &kind), length > 0 else { return nil }
        blob = Data(bytes: raw, count: length)
        type = Self.typeName(in: blob) ?? "unknown"
        if let hash = courier_ssh2_hostkey_sha256(session) {
            let digest = Data(bytes: hash, count: 32)
            fingerprint = "SHA256:" + digest.base64EncodedString().replacingOccurrences(of: "=", with: "")
        } else {
            fingerprint = Self.missingFingerprint
        }
        switch kind {
        case LIBSSH2_HOSTKEY_TYPE_RSA: knownHostKeyBits = LIBSSH2_KNOWNHOST_KEY_SSHRSA
        case LIBSSH2_HOSTKEY_TYPE_DSS: knownHostKeyBits = LIBSSH2_KNOWNHOST_KEY_SSHDSS
        case LIBSSH2_HOSTKEY_TYPE_ECDSA_256: knownHostKeyBits = LIBSSH2_KNOWNHOST_KEY_ECDSA_256
        case LIBSSH2_HOSTKEY_TYPE_ECDSA_384: knownHostKeyBits = LIBSSH2_KNOWNHOST_KEY_ECDSA_384
        case LIBSSH2_HOSTKEY_TYPE_ECDSA_521: knownHostKeyBits = LIBSSH2_KNOWNHOST_KEY_ECDSA_521
        case LIBSSH2_HOSTKEY_TYPE_ED25519: knownHostKeyBits = LIBSSH2_KNOWNHOST_KEY_ED25519
        default: knownHostKeyBits = LIBSSH2_KNOWNHOST_KEY_UNKNOWN
        }
    }

    /// Whether libssh2 could compute the fingerprint (without one, no credential can name the key).
    var hasFingerprint: Bool { fingerprint != Self.missingFingerprint }

    private static let missingFingerprint = "SHA256:?"

    /// The realm of the key's protection space: `"<type> <fingerprint>"` (see
    /// ``URLProtectionSpace/sshHostKeyType``).
    var realm: String { "\(type) \(fingerprint)" }

    /// The first string of an SSH key blob: its type name.
    static func typeName(in blob: Data) -> String? {
        guard blob.count >= 4 else { return nil }
        let bytes = [UInt8](blob.prefix(4))
        let length = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
        guard length > 0, length <= 64, blob.count >= 4 + length else { return nil }
        return String(bytes: blob.dropFirst(4).prefix(length), encoding: .utf8)
    }
}
