import Courier
@testable import CourierFoundationBridge
import Foundation

/// Installs the bridge as the tests need it: a Courier configuration that knows the test sshd's
/// host key (or, with `knowsHostKey: false`, an empty known-hosts file) and logs in with its key,
/// plus the fixture plugin loaded. Courier's side of the bridge is set up here, so the test files
/// themselves use FoundationNetworking's names alone.
enum BridgeTestSetup {
    /// Installs the bridge and returns the sshd it is set up for.
    @discardableResult
    static func install(knowsHostKey: Bool = true, servesFTPS: Bool = false) throws -> BridgeSSHServer {
        let server = try BridgeSSHServer.shared()
        try BridgeFixturePlugin.load()
        let configuration = Courier.URLSessionConfiguration.ephemeral
        configuration.sshKnownHostsURL = knowsHostKey ? server.knownHosts : server.emptyKnownHosts
        configuration.timeoutIntervalForRequest = 20
        let storage = configuration.urlCredentialStorage ?? Courier.URLCredentialStorage()
        let space = Courier.URLProtectionSpace(host: "127.0.0.1", port: server.port, protocol: "sftp", realm: nil,
                                               authenticationMethod: Courier.NSURLAuthenticationMethodDefault)
        storage.setDefaultCredential(Courier.URLCredential(user: BridgeSSHServer.user, privateKeyURL: server.clientKey,
                                                           passphrase: nil, persistence: .forSession), for: space)
        configuration.urlCredentialStorage = storage
        CourierFoundationBridge.install(configuration: configuration, servesFTPS: servesFTPS)
        return server
    }

    /// How many tasks the bridge's Courier session still runs.
    static func courierTaskCount() async -> Int {
        guard let session = BridgeInstallation.current?.session else { return 0 }
        return await withCheckedContinuation { continuation in
            session.getAllTasks { continuation.resume(returning: $0.count) }
        }
    }

    /// Waits (at most `seconds`) until the bridge's Courier session runs `count` tasks; returns
    /// whether it did.
    static func waitForCourierTasks(_ count: Int, seconds: Double = 10) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if await courierTaskCount() == count { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return await courierTaskCount() == count
    }
}
