import Foundation

/// What a session learned about its FTP servers: which ones do not understand `MLSD`, so later
/// listings of that server go straight to `LIST`.
final class FTPServerFeatures: HandlerSessionResource, @unchecked Sendable {
    static let resourceKey = "ftp.server-features"

    private let lock = Lock()
    private var withoutMLSD: Set<String> = []

    /// The session's table, created on first use.
    static func shared(in environment: HandlerEnvironment) -> FTPServerFeatures? {
        environment.resources.resource(resourceKey) { FTPServerFeatures() }
    }

    func lacksMLSD(_ url: URL) -> Bool {
        lock.withLock { withoutMLSD.contains(Self.key(url)) }
    }

    func recordLacksMLSD(_ url: URL) {
        _ = lock.withLock { withoutMLSD.insert(Self.key(url)) }
    }

    func shutDown() {
        lock.withLock { withoutMLSD.removeAll() }
    }

    private static func key(_ url: URL) -> String {
        "\(url.scheme?.lowercased() ?? "ftp")://\(url.host?.lowercased() ?? ""):\(url.port ?? TLSServerTrustChallenge.defaultPort(for: url))"
    }
}
