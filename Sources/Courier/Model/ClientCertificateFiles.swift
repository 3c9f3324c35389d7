import Foundation

/// Where a client certificate and its key are, for `URLCredential(clientCertificateURL:…)`.
struct ClientCertificateFiles: Sendable, Hashable {
    /// A PEM file, or a PKCS#12 file (`.p12` / `.pfx`).
    var certificate: URL
    /// The key's PEM file when it is not inside ``certificate``.
    var privateKey: URL?
    /// The passphrase of the key or PKCS#12 file.
    var passphrase: String?

    /// Whether ``certificate`` is PKCS#12 (judged by its extension).
    var isPKCS12: Bool {
        let ext = certificate.pathExtension.lowercased()
        return ext == "p12" || ext == "pfx"
    }
}
