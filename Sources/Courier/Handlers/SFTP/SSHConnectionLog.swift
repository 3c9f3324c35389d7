internal import CSSH2
import Foundation
import Logging

/// What an SSH connection tells the session's log at `debug`: the address it connected to, the
/// methods the handshake negotiated (key exchange, host key, ciphers, MACs, compression), the
/// server's host key, the authentication methods the server offers and the one that succeeded.
///
/// Each record carries ``WireTraceKind/info`` in its metadata, so `courier -v` shows them as `* `
/// lines, like the notes of libcurl's trace. libssh2's own trace (`libssh2_trace`) is not used:
/// Debian's libssh2 is built without it (`libssh2_trace` does nothing there). Nothing here runs
/// unless the logger's level is `debug` or below; no record holds a password or key material.
struct SSHConnectionLog: Sendable {
    private let logger: Logger?
    private let host: String

    /// The log of the connection `key`, to `logger` when that logs at `debug`.
    init(logger: Logger, key: SSHConnectionKey) {
        self.logger = CourierLogging.emits(.debug, logger) ? logger : nil
        host = key.description
    }

    /// The metadata of every record.
    private var metadata: Logger.Metadata {
        [CourierLogKey.wire: .string(WireTraceKind.info.rawValue), "courier.ssh": .string(host)]
    }

    /// Logs `text` (built only when it is logged).
    func note(_ text: @autoclosure () -> String) {
        guard let logger else { return }
        logger.debug("\(LogText.escaped(text()))", metadata: metadata)
    }

    /// The TCP connection is up.
    func connected(to remote: (address: String, port: Int)?) {
        note("Connected to \(host) (\(remote.map { "\($0.address) port \($0.port)" } ?? "?"))")
    }

    /// The handshake finished: what was negotiated, and the host key the server presented.
    func handshakeFinished(_ session: OpaquePointer, hostKey: SSHHostKey) {
        guard logger != nil else { return }
        let names: [(String, Int32)] = [
            ("kex", LIBSSH2_METHOD_KEX), ("host key", LIBSSH2_METHOD_HOSTKEY),
            ("cipher client->server", LIBSSH2_METHOD_CRYPT_CS), ("cipher server->client", LIBSSH2_METHOD_CRYPT_SC),
            ("mac client->server", LIBSSH2_METHOD_MAC_CS), ("mac server->client", LIBSSH2_METHOD_MAC_SC),
            ("compression", LIBSSH2_METHOD_COMP_CS),
        ]
        let negotiated = names.map { name, method in
            "\(name) \(libssh2_session_methods(session, method).map { String(cString: $0) } ?? "?")"
        }
        note("SSH handshake: " + negotiated.joined(separator: ", "))
        note("Server host key: \(hostKey.type) \(hostKey.fingerprint)")
    }

    /// The server said which authentication methods it accepts.
    func authenticationOffered(_ methods: String) {
        note("Authentication methods offered: \(methods)")
    }

    /// Authentication succeeded with `method` (`password`, `keyboard-interactive`, `publickey`,
    /// `agent`).
    func authenticated(with method: String?) {
        note("Authenticated as \(host)" + (method.map { " with \($0)" } ?? ""))
    }
}
