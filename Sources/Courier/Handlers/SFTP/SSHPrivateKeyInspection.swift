import Foundation

/// Reads what can be read of a private key file without its passphrase: the key type. Used to
/// explain a refused RSA key (libssh2 before 1.11 signs RSA with SHA-1 only).
enum SSHPrivateKeyInspection {
    /// The key type (`ssh-rsa`, `ssh-ed25519`, `ecdsa-sha2-nistp256`, …) of the key in `url`, when the
    /// file is readable and says so (OpenSSH format keeps the public key unencrypted; PEM names RSA
    /// and EC keys in its header).
    static func keyType(of url: URL) -> String? {
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return nil }
        if text.contains("-----BEGIN RSA PRIVATE KEY-----") { return "ssh-rsa" }
        if text.contains("-----BEGIN EC PRIVATE KEY-----") { return "ecdsa" }
        if text.contains("-----BEGIN DSA PRIVATE KEY-----") { return "ssh-dss" }
        guard let start = text.range(of: "-----BEGIN OPENSSH PRIVATE KEY-----"),
              let end = text.range(of: "-----END OPENSSH PRIVATE KEY-----", range: start.upperBound..<text.endIndex) else {
            return nil
        }
        let body = text[start.upperBound..<end.lowerBound].filter { !$0.isWhitespace }
        guard let blob = Data(base64Encoded: String(body)) else { return nil }
        var reader = Reader(bytes: [UInt8](blob))
        let magic = Array("openssh-key-v1".utf8) + [0]
        guard reader.take(magic.count) == magic else { return nil }
        // cipher name, KDF name, KDF options, number of keys, then the first public key.
        guard reader.string() != nil, reader.string() != nil, reader.string() != nil, reader.uint32() != nil,
              let publicKey = reader.string() else { return nil }
        var inner = Reader(bytes: publicKey)
        return inner.string().flatMap { String(bytes: $0, encoding: .utf8) }
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        mutating func take(_ count: Int) -> [UInt8]? {
            guard count >= 0, bytes.count - offset >= count else { return nil }
            defer { offset += count }
            return Array(bytes[offset..<offset + count])
        }

        mutating func uint32() -> Int? {
            guard let raw = take(4) else { return nil }
            return Int(raw[0]) << 24 | Int(raw[1]) << 16 | Int(raw[2]) << 8 | Int(raw[3])
        }

        mutating func string() -> [UInt8]? {
            guard let length = uint32(), length <= 1 << 20 else { return nil }
            return take(length)
        }
    }
}
