import Courier
import Foundation
import FoundationNetworking

/// Lets code written against FoundationNetworking's `URLSession` — an app's own, or a library's that
/// cannot take Courier's — load the URLs FoundationNetworking cannot, through Courier.
///
/// After ``install(configuration:servesFTPS:)`` the process's FoundationNetworking sessions load:
/// - `sftp:` (downloads, listings of URLs ending in `/`, and uploads of a request's `httpBody`);
/// - `file:` (FoundationNetworking refuses it in data tasks);
/// - the schemes of the Courier plugins loaded (`CourierPlugins`), also those loaded later;
/// - `ftps:`, only when asked for with `servesFTPS`.
///
/// `http`, `https`, `ftp` and `data` stay with FoundationNetworking.
///
/// ```swift
/// import CourierFoundationBridge
/// import FoundationNetworking
///
/// CourierFoundationBridge.install()
/// let (data, _) = try await URLSession.shared.data(from: URL(string: "sftp://me@host/etc/motd")!)
/// ```
///
/// `Documentation/FoundationBridge.md` says what is forwarded between the two — the body as it
/// arrives, redirects, challenges, cancellation, errors — and where the bridge stops.
public enum CourierFoundationBridge {

    /// Registers the bridge with FoundationNetworking (`URLProtocol.registerClass`) and makes the
    /// Courier session it loads with.
    ///
    /// Calling it again replaces the configuration and the option: loads already running finish on
    /// the session they started on, later ones use a new session.
    ///
    /// - Parameters:
    ///   - configuration: The configuration of the one Courier session every bridged load runs on.
    ///     The default, `.ephemeral`, keeps cookies, credentials and cached responses in memory, for
    ///     the bridge alone; SSH host keys are checked against the user's known-hosts files. Pass
    ///     another to share Courier's persistent stores (`.default`), or to name a known-hosts file,
    ///     a credential storage holding SSH keys, timeouts, and so on.
    ///   - servesFTPS: Whether the bridge also serves `ftps:`. Off by default: FoundationNetworking
    ///     serves `ftp:` itself, and bridging `ftps:` alone would split one server's traffic between
    ///     two stacks with their own connections, logins and TLS settings, while a
    ///     FoundationNetworking delegate cannot answer a server-trust challenge (it has no `SecTrust`
    ///     on Linux), so an untrusted certificate always fails. Turn it on when Courier's TLS
    ///     defaults (system CAs, `SSL_CERT_FILE`) are what the process wants.
    public static func install(configuration: Courier.URLSessionConfiguration = .ephemeral, servesFTPS: Bool = false) {
        BridgeInstallation.install(BridgeInstallation(configuration: configuration, servesFTPS: servesFTPS))
    }

    /// Unregisters the bridge: FoundationNetworking answers its schemes with `unsupportedURL` again.
    /// Loads already running finish; the bridge's Courier session is then invalidated.
    public static func uninstall() {
        BridgeInstallation.uninstall()
    }

    /// Whether the bridge is registered with FoundationNetworking.
    public static var isInstalled: Bool {
        BridgeInstallation.current != nil
    }

    /// The schemes the bridge serves right now: `sftp`, `file`, `ftps` when asked for, and the
    /// schemes of the plugins loaded so far; empty when it is not installed.
    public static var servedSchemes: Set<String> {
        BridgeInstallation.current?.servedSchemes ?? []
    }
}
