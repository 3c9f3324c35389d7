import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What makes two `sftp:` loads share an SSH connection: the same host, port and user.
struct SSHConnectionKey: Hashable, Sendable, CustomStringConvertible {
    /// The host name or address as the URL gave it, lowercased, IPv6 without brackets.
    var host: String
    var port: Int
    /// The URL's user, or the name of the account this process runs as.
    var user: String

    /// The port SSH servers listen on unless told otherwise.
    static let defaultPort = 22

    /// The key for `url`, or `nil` when it has no host.
    init?(url: URL) {
        guard var host = url.host, !host.isEmpty else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self.host = host.lowercased()
        port = url.port ?? Self.defaultPort
        let urlUser = url.user.map { $0.removingPercentEncoding ?? $0 } ?? ""
        user = urlUser.isEmpty ? Self.localUserName : urlUser
    }

    /// The host as OpenSSH writes it in known_hosts: `host` on port 22, `[host]:port` elsewhere.
    var knownHostsName: String {
        port == Self.defaultPort ? host : "[\(host)]:\(port)"
    }

    var description: String { "\(user)@\(knownHostsName)" }

    /// The login name of the account this process runs as (`$USER` when the account has none).
    static var localUserName: String {
        if let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name {
            let text = String(cString: name)
            if !text.isEmpty { return text }
        }
        return ProcessInfo.processInfo.environment["USER"] ?? "root"
    }
}
