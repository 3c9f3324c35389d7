internal import CSSH2
import Foundation

/// One SSH connection's user authentication, driven step by step on the event-loop thread.
///
/// The order follows OpenSSH's client:
/// 1. an explicit credential: the URL's password, else the credential storage's credential for the
///    server's protection space (protocol `"sftp"`) — a password (tried as `password`, then as
///    `keyboard-interactive` answers) or an SSH key (`URLCredential(user:privateKeyURL:…)`);
/// 2. without one, the user's ssh-agent (`SSH_AUTH_SOCK`), then the default identity files
///    `~/.ssh/id_ed25519`, `id_ecdsa` and `id_rsa` (encrypted ones are skipped);
/// 3. then the delegate, through an authentication challenge, as often as it supplies new
///    credentials (a credential that already failed ends the exchange).
final class SSHAuthentication {
    enum Step {
        /// A call would block: wait for the socket.
        case again
        /// Something changed that needs no socket: step again now.
        case progress
        /// The server accepted a method; `credential` is the one to store when it came from the
        /// delegate with a persistence.
        case authenticated(storing: URLCredential?)
        /// Every method so far failed: ask the delegate.
        case needsCredential
        /// The session cannot continue (the server hung up, perhaps after too many attempts).
        case failed(URLError)
    }

    private enum Method {
        case password(user: String, password: String, credential: URLCredential?)
        case publicKey(user: String, key: SSHPrivateKeyFile, credential: URLCredential?)
        case agent(user: String, socketPath: String)
    }

    private enum PasswordPhase { case password, keyboardInteractive }

    let key: SSHConnectionKey
    let url: URL?
    let protectionSpace: URLProtectionSpace
    private let environment: HandlerEnvironment
    private var offered: Set<String>?
    private var pending: [Method] = []
    private var current: Method?
    private var passwordPhase = PasswordPhase.password
    private var agent: SSHAgentAuthentication?
    private var failedCredentials: [URLCredential] = []
    private var usedStoredCredential = false
    /// The connection's log: the methods the server offers.
    private let log: SSHConnectionLog?

    /// Credentials (explicit or from the delegate) that failed so far.
    var failureCount: Int { failedCredentials.count }
    /// The last credential that failed, proposed in the next challenge.
    var lastFailedCredential: URLCredential? { failedCredentials.last }
    /// Why the last attempt failed, for the final error.
    private(set) var lastFailure: String?

    init(key: SSHConnectionKey, url: URL?, environment: HandlerEnvironment, log: SSHConnectionLog? = nil) {
        self.key = key
        self.url = url
        self.environment = environment
        self.log = log
        protectionSpace = URLProtectionSpace(host: key.host, port: key.port, protocol: "sftp", realm: nil,
                                             authenticationMethod: NSURLAuthenticationMethodDefault)
        if let password = url?.password.map({ $0.removingPercentEncoding ?? $0 }) {
            let user = key.user
            pending = [.password(user: user, password: password, credential: URLCredential(user: user, password: password, persistence: .none))]
        } else if let stored = storedCredential() {
            usedStoredCredential = true
            pending = methods(for: stored)
        } else {
            pending = defaultMethods()
        }
    }

    // MARK: Credentials

    /// The credential storage's credential for this server: the one for the user, else the default.
    private func storedCredential() -> URLCredential? {
        guard let storage = environment.credentialStorage else { return nil }
        if let forUser = storage.credentials(for: protectionSpace)?[key.user] { return forUser }
        if let fallback = storage.defaultCredential(for: protectionSpace),
           fallback.user == key.user || url?.user == nil {
            return fallback
        }
        return nil
    }

    private func methods(for credential: URLCredential) -> [Method] {
        let user = credential.user.flatMap { $0.isEmpty ? nil : $0 } ?? key.user
        if let file = credential.sshPrivateKey {
            return [.publicKey(user: user, key: file, credential: credential)]
        }
        if let password = credential.password {
            return [.password(user: user, password: password, credential: credential)]
        }
        return []
    }

    /// The agent, then the default identity files that exist.
    private func defaultMethods() -> [Method] {
        var methods: [Method] = []
        let user = key.user
        let settings = environment.sshUserEnvironment
        if let socket = settings.agentSocketPath {
            methods.append(.agent(user: user, socketPath: socket))
        }
        if let directory = settings.identityDirectory {
            for name in ["id_ed25519", "id_ecdsa", "id_rsa"] {
                let file = directory.appendingPathComponent(name)
                if FileManager.default.isReadableFile(atPath: file.path) {
                    methods.append(.publicKey(user: user, key: SSHPrivateKeyFile(url: file, passphrase: nil), credential: nil))
                }
            }
        }
        return methods
    }

    /// Adds the delegate's credential; `false` when it cannot help (it already failed, or carries
    /// nothing SSH can use).
    func add(_ credential: URLCredential) -> Bool {
        if failedCredentials.contains(where: { $0.isEqual(credential) }) { return false }
        let added = methods(for: credential)
        guard !added.isEmpty else { return false }
        pending.append(contentsOf: added)
        return true
    }

    /// Adds the stored credential for default handling; `false` when there is none left to try.
    func addStoredCredential() -> Bool {
        guard !usedStoredCredential, let stored = storedCredential() else { return false }
        usedStoredCredential = true
        return add(stored)
    }

    /// The method being tried (the one that succeeded, once authenticated), as SSH names it.
    var methodName: String? {
        switch current {
        case .password: passwordPhase == .password ? "password" : "keyboard-interactive"
        case .publicKey: "publickey"
        case .agent: "publickey (agent)"
        case nil: nil
        }
    }

    // MARK: Stepping

    /// Advances authentication on `session`.
    func step(session: OpaquePointer) -> Step {
        if offered == nil {
            guard let list = courier_ssh2_userauth_list(session, key.user) else {
                if libssh2_userauth_authenticated(session) != 0 { return .authenticated(storing: nil) }
                let code = libssh2_session_last_errno(session)
                if code == LIBSSH2_ERROR_EAGAIN { return .again }
                return .failed(sessionFailure(code, session: session))
            }
            let text = String(cString: list)
            log?.authenticationOffered(text)
            offered = Set(text.split(separator: ",").map { String($0) })
        }
        if current == nil {
            guard !pending.isEmpty else { return .needsCredential }
            current = pending.removeFirst()
            passwordPhase = .password
        }
        guard let method = current else { return .needsCredential }
        switch method {
        case .password(let user, let password, let credential):
            return stepPassword(user: user, password: password, credential: credential, session: session)
        case .publicKey(let user, let file, let credential):
            return stepPublicKey(user: user, file: file, credential: credential, session: session)
        case .agent(let user, let socketPath):
            return stepAgent(user: user, socketPath: socketPath, session: session)
        }
    }

    private func stepPassword(user: String, password: String, credential: URLCredential?, session: OpaquePointer) -> Step {
        let methods = offered ?? []
        if passwordPhase == .password && !methods.contains("password") { passwordPhase = .keyboardInteractive }
        if passwordPhase == .keyboardInteractive && !methods.contains("keyboard-interactive") {
            return attemptFailed(credential, reason: "The server accepts no password (it offers \(offeredList)).")
        }
        let result: Int32
        switch passwordPhase {
        case .password:
            result = courier_ssh2_userauth_password(session, user, password)
        case .keyboardInteractive:
            courier_ssh2_set_kbdint_password(session, password)
            result = courier_ssh2_userauth_kbdint(session, user)
            if result != LIBSSH2_ERROR_EAGAIN { courier_ssh2_set_kbdint_password(session, nil) }
        }
        switch result {
        case 0:
            return .authenticated(storing: credential)
        case LIBSSH2_ERROR_EAGAIN:
            return .again
        case LIBSSH2_ERROR_AUTHENTICATION_FAILED, LIBSSH2_ERROR_PASSWORD_EXPIRED, LIBSSH2_ERROR_PUBLICKEY_UNVERIFIED,
             LIBSSH2_ERROR_METHOD_NOT_SUPPORTED:
            if passwordPhase == .password && methods.contains("keyboard-interactive") {
                passwordPhase = .keyboardInteractive
                return .progress
            }
            let reason = result == LIBSSH2_ERROR_PASSWORD_EXPIRED
                ? "The password of \(user) has expired." : "The server refused the password for \(user)."
            return attemptFailed(credential, reason: reason)
        default:
            return .failed(sessionFailure(result, session: session))
        }
    }

    private func stepPublicKey(user: String, file: SSHPrivateKeyFile, credential: URLCredential?, session: OpaquePointer) -> Step {
        guard offered?.contains("publickey") ?? false else {
            return attemptFailed(credential, reason: "The server accepts no public keys (it offers \(offeredList)).")
        }
        let result = courier_ssh2_userauth_publickey_fromfile(session, user, nil, file.url.path, file.passphrase ?? "")
        switch result {
        case 0:
            return .authenticated(storing: credential)
        case LIBSSH2_ERROR_EAGAIN:
            return .again
        case LIBSSH2_ERROR_FILE, LIBSSH2_ERROR_KEYFILE_AUTH_FAILED:
            let reason = file.passphrase == nil
                ? "The private key \(file.url.path) could not be read (it may need a passphrase)."
                : "The private key \(file.url.path) could not be read (wrong passphrase, or a format libssh2 cannot read)."
            return attemptFailed(credential, reason: reason)
        case LIBSSH2_ERROR_AUTHENTICATION_FAILED, LIBSSH2_ERROR_PUBLICKEY_UNVERIFIED, LIBSSH2_ERROR_METHOD_NOT_SUPPORTED:
            return attemptFailed(credential, reason: refusedKeyReason(file: file, user: user))
        default:
            return .failed(sessionFailure(result, session: session))
        }
    }

    private func stepAgent(user: String, socketPath: String, session: OpaquePointer) -> Step {
        if agent == nil {
            guard let connected = SSHAgentAuthentication(session: session, socketPath: socketPath) else {
                return nextMethod()
            }
            agent = connected
        }
        guard let agent else { return nextMethod() }
        switch agent.step(user: user) {
        case .again: return .again
        case .next: return .progress
        case .authenticated:
            self.agent = nil
            return .authenticated(storing: nil)
        case .exhausted:
            self.agent = nil
            lastFailure = "The server refused every key in the SSH agent."
            return nextMethod()
        case .failed(let code):
            self.agent = nil
            return .failed(sessionFailure(code, session: session))
        }
    }

    // MARK: Failures

    private func nextMethod() -> Step {
        current = nil
        return .progress
    }

    private func attemptFailed(_ credential: URLCredential?, reason: String) -> Step {
        lastFailure = reason
        if let credential { failedCredentials.append(credential) }
        return nextMethod()
    }

    private var offeredList: String {
        let list = (offered ?? []).sorted().joined(separator: ", ")
        return list.isEmpty ? "nothing" : list
    }

    /// Why the server refused a key: for RSA keys with a libssh2 that signs only with SHA-1, says so.
    private func refusedKeyReason(file: SSHPrivateKeyFile, user: String) -> String {
        if SSHPrivateKeyInspection.keyType(of: file.url) == "ssh-rsa", !SSHLibrary.signsRSAWithSHA2 {
            return "The server refused the RSA key \(file.url.lastPathComponent) for \(user): this system's libssh2 "
                + "(\(SSHLibrary.version)) signs RSA keys with SHA-1 (ssh-rsa) only, which OpenSSH 8.8 and later "
                + "refuse. Use an ed25519 or ECDSA key, or a libssh2 of version 1.11 or later."
        }
        return "The server refused the key \(file.url.lastPathComponent) for \(user)."
    }

    /// The error that ends authentication: the server stopped talking (too many attempts, or it
    /// went away), explained with the last refusal when there was one.
    private func sessionFailure(_ code: Int32, session: OpaquePointer) -> URLError {
        if let lastFailure {
            return URLError(.userAuthenticationRequired, url: url,
                            description: "\(lastFailure) The server then closed the connection.")
        }
        return SFTPErrorMapping.sessionError(code, message: SFTPErrorMapping.lastErrorMessage(of: session),
                                             established: true, url: url)
    }

    /// The error when no credential is left: authentication required, with the last refusal.
    func exhaustedError() -> URLError {
        URLError(.userAuthenticationRequired, url: url,
                 description: lastFailure ?? "The SSH server requires authentication for \(key.user).")
    }
}
