import Foundation

/// The servers a session's delegate accepted in server-trust challenges, by host and port. Later
/// tasks of the session connect to them without asking again — as on Apple's platforms, where the
/// challenge comes once per connection and connections are reused — and, having the same TLS
/// settings, share their connections.
final class TLSAcceptedServers: HandlerSessionResource, @unchecked Sendable {
    static let resourceKey = "tls.accepted-servers"

    private let lock = Lock()
    private var servers: [Key: TLSServerTrust] = [:]
    /// Whether any server was accepted: most sessions accept none, and then a look-up need not
    /// build a key.
    private var isEmpty: Bool { lock.withLock { servers.isEmpty } }

    /// The session's table, created on first use.
    static func shared(in environment: HandlerEnvironment) -> TLSAcceptedServers? {
        environment.resources.resource(resourceKey) { TLSAcceptedServers() }
    }

    func server(for url: URL) -> TLSServerTrust? {
        if isEmpty { return nil }
        let key = Self.key(url)
        return lock.withLock { servers[key] }
    }

    /// Remembers `server` for `url`'s host and port and returns what is remembered: an earlier
    /// acceptance of the same key wins, so concurrent first tasks end up with one pin (and libcurl,
    /// seeing equal TLS settings, can share their connections).
    func accept(_ server: TLSServerTrust, for url: URL) -> TLSServerTrust {
        lock.withLock {
            let key = Self.key(url)
            if let existing = servers[key], existing.publicKey == server.publicKey { return existing }
            servers[key] = server
            return server
        }
    }

    func shutDown() {
        lock.withLock { servers.removeAll() }
    }

    /// A server: host (lowercased) and port.
    private struct Key: Hashable {
        let host: String
        let port: Int
    }

    private static func key(_ url: URL) -> Key {
        Key(host: url.host?.lowercased() ?? "", port: url.port ?? TLSServerTrustChallenge.defaultPort(for: url))
    }
}
