import Foundation
import Logging

/// What a built-in handler needs to know about the session it serves, without depending on the
/// session layer: the stores, the connection settings, and a place for per-session engines.
///
/// The session builds one environment when it is created; it reaches each handler inside the
/// ``HandlerConfiguration`` its client carries (``BuiltInHandlerClient/configuration``). The session's
/// `URLCache` is not in it: the task layer alone looks responses up and stores them. Nor are
/// timeouts: they belong to each load (``HandlerConfiguration/requestTimeout``).
struct HandlerEnvironment: @unchecked Sendable {
    /// Per-session objects handlers create on first use (the libcurl multi loop, SSH connections).
    let resources: HandlerSessionResources
    let cookieStorage: HTTPCookieStorage?
    /// `httpShouldSetCookies`: send stored cookies and store received ones.
    let shouldSetCookies: Bool
    let cookieAcceptPolicy: HTTPCookie.AcceptPolicy
    let credentialStorage: URLCredentialStorage?
    let maximumConnectionsPerHost: Int
    let proxyDictionary: [AnyHashable: Any]?
    /// `waitsForConnectivity`: retry unreachable hosts instead of failing.
    var waitsForConnectivity = false
    /// The TLS versions connections may use.
    var tlsVersions: ClosedRange<UInt16> = 0x0303...0x0304
    /// The certificate authorities to verify TLS servers against; `nil`: the system's.
    var tlsTrustAnchors: TLSTrustAnchors?
    /// `sshKnownHostsURL`: the known-hosts file for SSH host keys (`nil`: the user's and the system's).
    var sshKnownHostsURL: URL?
    /// `sshStrictHostKeyChecking`: whether unknown SSH hosts are asked about or recorded.
    var sshStrictHostKeyChecking = SSHStrictHostKeyChecking.yes
    /// Where the SSH agent socket and the default identity files are.
    var sshUserEnvironment = SSHUserEnvironment.process
    /// Which proxy variables libcurl would read are set, read when the environment is made.
    var proxyEnvironment = HTTPProxyEnvironment.process
    /// How large a response body may grow (`maximumResponseBodySize`).
    var responseBodyLimit = ResponseBodyLimit()
    /// The caps on one directory listing (``DirectoryListingLimits``).
    var listingCaps = DirectoryListingLimits.standard
    /// The session's logger (``URLSessionConfiguration/logger``): what the handlers' connections log.
    var logger = CourierLogging.disabled
    /// Whether trace records keep credentials (`courier --trace-secrets`); else they are redacted.
    var logsSecrets = false

    /// An environment with no stores, for handlers driven outside a session.
    static func standalone() -> HandlerEnvironment {
        HandlerEnvironment(resources: HandlerSessionResources(), cookieStorage: nil, shouldSetCookies: false,
                           cookieAcceptPolicy: .never, credentialStorage: nil,
                           maximumConnectionsPerHost: 6, proxyDictionary: nil)
    }
}

/// An object a handler keeps for the lifetime of a session, shut down when the session goes away.
protocol HandlerSessionResource: AnyObject, Sendable {
    /// Releases threads, connections and handles. Called once.
    func shutDown()
}

/// The per-session resources of all handlers, keyed by handler family.
final class HandlerSessionResources: @unchecked Sendable {
    private let lock = Lock()
    private var resources: [String: any HandlerSessionResource] = [:]
    /// Set by ``shutDownAll()``: the session is gone, and no resource (no thread, no loop) is made
    /// for it again.
    private var isShutDown = false

    /// The resource stored under `key`, created by `make` on first use (`nil` when it cannot be
    /// made, the next call tries again; and always `nil` once the resources were shut down).
    func resource<R: HandlerSessionResource>(_ key: String, make: () -> R?) -> R? {
        lock.withLock {
            if let existing = resources[key] { return existing as? R }
            guard !isShutDown, let created = make() else { return nil }
            resources[key] = created
            return created
        }
    }

    /// Shuts every resource down (the session was invalidated or released).
    func shutDownAll() {
        let all: [any HandlerSessionResource] = lock.withLock {
            isShutDown = true
            defer { resources.removeAll() }
            return Array(resources.values)
        }
        for resource in all { resource.shutDown() }
    }

    deinit {
        for resource in resources.values { resource.shutDown() }
    }
}
