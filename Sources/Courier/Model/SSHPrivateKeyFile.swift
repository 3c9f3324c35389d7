import Foundation

/// Where an SSH private key is, for `URLCredential(user:privateKeyURL:passphrase:persistence:)`.
struct SSHPrivateKeyFile: Sendable, Hashable {
    /// The private key file (OpenSSH or PEM format).
    var url: URL
    /// The passphrase of an encrypted key.
    var passphrase: String?
}
