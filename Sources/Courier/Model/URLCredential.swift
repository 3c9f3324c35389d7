import Foundation

/// An immutable user name and password, plus how long a credential storage should keep them.
///
/// Two credentials are equal when their user, password and persistence are equal.
open class URLCredential: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    // Immutable after `init`, which keeps the `@unchecked Sendable` promise.
    private let _user: String
    private let _password: String
    private let _persistence: Persistence
    private let _trust: SecTrust?
    private let _clientCertificate: ClientCertificateFiles?
    private let _sshPrivateKey: SSHPrivateKeyFile?
    private let _sshHostKeyFingerprint: String?

    private static let userKey = "NS._user"
    private static let passwordKey = "NS._password"
    private static let persistenceKey = "NS._persistence"
    private static let sshHostKeyFingerprintKey = "Courier._sshHostKeyFingerprint"

    /// Creates a password credential.
    ///
    /// - Parameters:
    ///   - user: The user name.
    ///   - password: The password.
    ///   - persistence: How long a `URLCredentialStorage` keeps the credential.
    public init(user: String, password: String, persistence: URLCredential.Persistence) {
        _user = user
        _password = password
        _persistence = persistence
        _trust = nil
        _clientCertificate = nil
        _sshPrivateKey = nil
        _sshHostKeyFingerprint = nil
        super.init()
    }

    /// An SSH public-key credential for `sftp:` URLs: the user name and the private key file to sign with.
    ///
    /// The key file is read when the credential is used. OpenSSH-format keys (`ssh-keygen`'s default)
    /// and PEM keys work; ed25519 and ECDSA keys always, RSA keys as far as the system's libssh2
    /// allows (libssh2 before 1.11 signs only with SHA-1, which OpenSSH 8.8 and later refuse — the load
    /// then fails with `URLError.userAuthenticationRequired` saying so). A public key file next to the
    /// private one is not needed.
    ///
    /// Such a credential has a ``user`` but no ``password``. Credential storages keep it in memory
    /// only, even with `.permanent` persistence.
    ///
    /// - Parameters:
    ///   - user: The SSH user name.
    ///   - privateKeyURL: The private key file.
    ///   - passphrase: The passphrase of an encrypted key, `nil` for a key without one.
    ///   - persistence: How long a credential storage keeps it.
    public init(user: String, privateKeyURL: URL, passphrase: String?, persistence: URLCredential.Persistence) {
        _user = user
        _password = ""
        _persistence = persistence
        _trust = nil
        _clientCertificate = nil
        _sshPrivateKey = SSHPrivateKeyFile(url: privateKeyURL, passphrase: passphrase)
        _sshHostKeyFingerprint = nil
        super.init()
    }

    /// A credential that accepts the server whose trust object a server-trust challenge carried
    /// (see ``SecTrust``). Its persistence is `.forSession`; it has no user or password.
    public init(trust: SecTrust) {
        _user = ""
        _password = ""
        _persistence = .forSession
        _trust = trust
        _clientCertificate = nil
        _sshPrivateKey = nil
        _sshHostKeyFingerprint = nil
        super.init()
    }

    /// A client-certificate credential from files, the Linux counterpart of Apple's
    /// `init(identity:certificates:persistence:)`: answers a challenge whose authentication method is
    /// `NSURLAuthenticationMethodClientCertificate`.
    ///
    /// - Parameters:
    ///   - clientCertificateURL: A PEM file (certificate, optionally followed by its key) or a
    ///     PKCS#12 file (`.p12` / `.pfx`).
    ///   - privateKeyURL: The private key's PEM file, when it is not in the certificate file.
    ///   - passphrase: The passphrase of the key or PKCS#12 file, if it is encrypted.
    ///   - persistence: How long a credential storage keeps it.
    public init(clientCertificateURL: URL, privateKeyURL: URL? = nil, passphrase: String? = nil,
                persistence: URLCredential.Persistence) {
        _user = ""
        _password = ""
        _persistence = persistence
        _trust = nil
        _clientCertificate = ClientCertificateFiles(certificate: clientCertificateURL, privateKey: privateKeyURL,
                                                    passphrase: passphrase)
        _sshPrivateKey = nil
        _sshHostKeyFingerprint = nil
        super.init()
    }

    /// A credential that accepts one SSH host key: the answer that lets an `sftp:` load trust a
    /// server whose key is not in the known-hosts files (an `NSURLAuthenticationMethodSSHHostKey`
    /// challenge). It accepts the key only when `fingerprint` is exactly the challenge's
    /// `protectionSpace.sshHostKeyFingerprint` (`SHA256:` and unpadded base64, as `ssh-keygen -l`
    /// prints it); any other answer to such a challenge refuses the key. The key is then trusted
    /// for the rest of the session; nothing is written to the known-hosts file.
    ///
    /// Its persistence is `.forSession`; it has no user or password.
    ///
    /// - Parameter fingerprint: The SHA-256 fingerprint of the host key to accept.
    public init(sshHostKeyFingerprint fingerprint: String) {
        _user = ""
        _password = ""
        _persistence = .forSession
        _trust = nil
        _clientCertificate = nil
        _sshPrivateKey = nil
        _sshHostKeyFingerprint = fingerprint
        super.init()
    }

    /// The SHA-256 fingerprint of the SSH host key this credential accepts, for credentials made
    /// with ``init(sshHostKeyFingerprint:)``; `nil` for every other credential.
    public var sshHostKeyFingerprint: String? { _sshHostKeyFingerprint }

    /// The certificate files of a client-certificate credential.
    var clientCertificate: ClientCertificateFiles? { _clientCertificate }

    /// The private key file of an SSH public-key credential.
    var sshPrivateKey: SSHPrivateKeyFile? { _sshPrivateKey }

    /// The server trust this credential accepts, for `init(trust:)` credentials.
    var trust: SecTrust? { _trust }

    /// Decodes a credential written by `encode(with:)`; fails for a non-keyed coder.
    ///
    /// - Parameter aDecoder: A keyed unarchiver.
    required public init?(coder aDecoder: NSCoder) {
        guard aDecoder.allowsKeyedCoding else { return nil }
        let user = aDecoder.decodeObject(of: NSString.self, forKey: Self.userKey)
        let password = aDecoder.decodeObject(of: NSString.self, forKey: Self.passwordKey)
        let rawPersistence = aDecoder.decodeInteger(forKey: Self.persistenceKey)
        _user = user.map { String(describing: $0) } ?? ""
        _password = password.map { String(describing: $0) } ?? ""
        _trust = nil
        _clientCertificate = nil
        _sshPrivateKey = nil
        _sshHostKeyFingerprint = aDecoder.containsValue(forKey: Self.sshHostKeyFingerprintKey)
            ? aDecoder.decodeObject(of: NSString.self, forKey: Self.sshHostKeyFingerprintKey).map { String(describing: $0) }
            : nil
        _persistence = UInt(exactly: rawPersistence).flatMap(Persistence.init(rawValue:)) ?? .none
        super.init()
    }

    /// Writes the user, password, persistence and SSH host-key fingerprint (if any) to a keyed
    /// archiver (other coders are ignored).
    ///
    /// - Parameter aCoder: A keyed archiver.
    open func encode(with aCoder: NSCoder) {
        guard aCoder.allowsKeyedCoding else { return }
        aCoder.encode(NSString(string: _user), forKey: Self.userKey)
        aCoder.encode(NSString(string: _password), forKey: Self.passwordKey)
        aCoder.encode(Int(_persistence.rawValue), forKey: Self.persistenceKey)
        if let fingerprint = _sshHostKeyFingerprint {
            aCoder.encode(NSString(string: fingerprint), forKey: Self.sshHostKeyFingerprintKey)
        }
    }

    /// Always `true`: credentials decode safely from secure archives.
    public static var supportsSecureCoding: Bool { true }

    /// Returns the credential itself; it is immutable.
    override open func copy() -> Any {
        copy(with: nil)
    }

    /// Returns the credential itself; it is immutable.
    ///
    /// - Parameter zone: Ignored.
    open func copy(with zone: NSZone? = nil) -> Any {
        self
    }

    /// Whether `object` is a credential with the same user, password and persistence.
    ///
    /// - Parameter object: The object to compare with.
    override open func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? URLCredential else { return false }
        if other === self { return true }
        return other.user == user && other.password == password && other.persistence == persistence
            && other._sshPrivateKey == _sshPrivateKey && other._sshHostKeyFingerprint == _sshHostKeyFingerprint
    }

    /// A hash consistent with `isEqual(_:)`.
    override open var hash: Int {
        var hasher = Hasher()
        hasher.combine(user)
        hasher.combine(password)
        hasher.combine(persistence)
        hasher.combine(_sshPrivateKey)
        hasher.combine(_sshHostKeyFingerprint)
        return hasher.finalize()
    }

    /// How long a credential storage keeps this credential.
    open var persistence: URLCredential.Persistence { _persistence }

    /// The user name.
    open var user: String? { _trust == nil && _clientCertificate == nil && _sshHostKeyFingerprint == nil ? _user : nil }

    /// The password; `nil` for server-trust, client-certificate, SSH-key and SSH host-key credentials.
    open var password: String? { hasPassword ? _password : nil }

    /// Whether the credential carries a password; always `true` for password credentials.
    open var hasPassword: Bool {
        _trust == nil && _clientCertificate == nil && _sshPrivateKey == nil && _sshHostKeyFingerprint == nil
    }

    /// A summary naming the user and persistence; the password is never printed.
    override open var description: String {
        "<\(type(of: self)) user:\"\(_user)\" persistence:\(_persistence)>"
    }
}

extension URLCredential {

    /// How long a credential is kept by `URLCredentialStorage`.
    public enum Persistence: UInt, Sendable {

        /// Use the credential for one request only; credential storages do not keep it.
        case none

        /// Keep the credential until the process exits.
        case forSession

        /// Keep the credential permanently: `URLCredentialStorage.shared` writes it to a file only
        /// its owner can read; other storages keep it, like `.forSession`, until the process exits.
        case permanent

        /// Keep the credential permanently and synchronise it between devices. Linux has no such
        /// service, so credential storages refuse credentials with this persistence.
        @available(*, deprecated, message: "Synchronizable credential storage is not available in swift-corelibs-foundation. If you rely on synchronization for your functionality, please audit your code.")
        case synchronizable
    }
}
