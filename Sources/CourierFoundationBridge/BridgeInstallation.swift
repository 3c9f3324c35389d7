import Courier
import Foundation
import FoundationNetworking

/// What ``CourierFoundationBridge/install(configuration:servesFTPS:)`` set up: the Courier session
/// every bridged load runs on, and the schemes the bridge takes.
final class BridgeInstallation: Sendable {
    /// The schemes FoundationNetworking serves itself; the bridge never takes them over, whatever
    /// a plugin serves (FoundationNetworking asks its own protocols first anyway).
    static let foundationSchemes: Set<String> = ["http", "https", "ftp", "data"]

    /// The schemes the bridge always serves.
    static let courierSchemes: Set<String> = ["sftp", "file"]

    /// The session the loads run on. It has no delegate: each load is its task's own delegate.
    let session: Courier.URLSession
    let servesFTPS: Bool

    init(configuration: Courier.URLSessionConfiguration, servesFTPS: Bool) {
        session = Courier.URLSession(configuration: configuration)
        self.servesFTPS = servesFTPS
    }

    /// Whether the bridge serves `scheme` (lowercase). Plugins are looked up on every call, so a
    /// plugin loaded after `install()` is served too.
    func serves(_ scheme: String) -> Bool {
        if Self.courierSchemes.contains(scheme) { return true }
        if scheme == "ftps" { return servesFTPS }
        return !Self.foundationSchemes.contains(scheme) && Self.pluginSchemes.contains(scheme)
    }

    var servedSchemes: Set<String> {
        Self.courierSchemes
            .union(servesFTPS ? ["ftps"] : [])
            .union(Self.pluginSchemes.subtracting(Self.foundationSchemes))
    }

    private static var pluginSchemes: Set<String> {
        Set(CourierPlugins.loaded.flatMap { plugin in plugin.schemes.map(\.name) })
    }

    // MARK: The process's installation

    private struct State {
        var current: BridgeInstallation?
        var registered = false
    }

    private static let state = Locked(State())

    /// The installation in force, nil when the bridge is not installed.
    static var current: BridgeInstallation? {
        state.withLock { $0.current }
    }

    static func install(_ installation: BridgeInstallation) {
        let previous = state.withLock { state -> BridgeInstallation? in
            let previous = state.current
            state.current = installation
            if !state.registered {
                state.registered = FoundationNetworking.URLProtocol.registerClass(CourierBridgeURLProtocol.self)
            }
            return previous
        }
        previous?.session.finishTasksAndInvalidate()
    }

    static func uninstall() {
        let previous = state.withLock { state -> BridgeInstallation? in
            let previous = state.current
            state.current = nil
            if state.registered {
                FoundationNetworking.URLProtocol.unregisterClass(CourierBridgeURLProtocol.self)
                state.registered = false
            }
            return previous
        }
        previous?.session.finishTasksAndInvalidate()
    }
}
