import Foundation

/// The host key an `NSURLAuthenticationMethodSSHHostKey` challenge is about.
///
/// Such a protection space has the server's host and port, the protocol `"sftp"`, and a realm of
/// the form `"<key type> SHA256:<fingerprint>"` — for example
/// `"ssh-ed25519 SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s"` — with the key type as the
/// key blob names it and the fingerprint as OpenSSH prints it (`ssh-keygen -lf`, unpadded base64 of
/// the SHA-256 of the key blob). These accessors read the two parts.
extension URLProtectionSpace {
    /// The host key's type (`ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`, …) for an SSH host-key
    /// protection space; `nil` for any other space.
    public var sshHostKeyType: String? {
        sshHostKeyRealmParts?.type
    }

    /// The host key's SHA-256 fingerprint as OpenSSH prints it (`SHA256:` and unpadded base64) for
    /// an SSH host-key protection space; `nil` for any other space.
    public var sshHostKeyFingerprint: String? {
        sshHostKeyRealmParts?.fingerprint
    }

    private var sshHostKeyRealmParts: (type: String, fingerprint: String)? {
        guard authenticationMethod == NSURLAuthenticationMethodSSHHostKey, let realm else { return nil }
        let parts = realm.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2, parts[1].hasPrefix("SHA256:") else { return nil }
        return (String(parts[0]), String(parts[1]))
    }
}
