import Foundation
import Logging

/// The settings a session is created with: timeouts, caching, cookies, credentials, extra headers
/// and the protocol classes it consults first.
///
/// A session copies its configuration when it is created, so changing the object afterwards does
/// not affect that session; `URLSession.configuration` returns another copy.
open class URLSessionConfiguration: NSObject, NSCopying, @unchecked Sendable {
    private struct Settings {
        var identifier: String?
        var requestCachePolicy: URLRequest.CachePolicy = .useProtocolCachePolicy
        var timeoutIntervalForRequest: TimeInterval = 60
        var timeoutIntervalForResource: TimeInterval = 604_800
        var networkServiceType: URLRequest.NetworkServiceType = .default
        var allowsCellularAccess = true
        var isDiscretionary = false
        var sharedContainerIdentifier: String?
        var connectionProxyDictionary: [AnyHashable: Any]?
        var httpShouldUsePipelining = false
        var httpShouldSetCookies = true
        var httpCookieAcceptPolicy: HTTPCookie.AcceptPolicy = .onlyFromMainDocumentDomain
        var httpAdditionalHeaders: [AnyHashable: Any]?
        var httpMaximumConnectionsPerHost = 6
        var httpCookieStorage: HTTPCookieStorage?
        var urlCredentialStorage: URLCredentialStorage?
        var urlCache: URLCache?
        var shouldUseExtendedBackgroundIdleMode = false
        var protocolClasses: [AnyClass]? = []
        var waitsForConnectivity = false
        var tlsMinimumSupportedProtocolVersion: tls_protocol_version_t = .TLSv12
        var tlsMaximumSupportedProtocolVersion: tls_protocol_version_t = .TLSv13
        var sshKnownHostsURL: URL?
        var sshStrictHostKeyChecking = SSHStrictHostKeyChecking.yes
        var sshUserEnvironment: SSHUserEnvironment?
        var tlsTrustAnchors: TLSTrustAnchors?
        var maximumResponseBodySize: Int64?
        var inMemoryResponseBodyLimit = ResponseBodyLimit.defaultInMemory
        var directoryListingCaps = DirectoryListingLimits.standard
        var isBackground = false
        var sessionSendsLaunchEvents = true
        var backgroundAgentDirectories: BackgroundDirectories?
        var backgroundAgentExecutable: String?
        var backgroundAgentEnvironment: [String: String] = [:]
        var logger = CourierLogging.environmentLogger
        var logsSecrets = false
    }

    private let lock = Lock()
    private var settings: Settings

    private init(settings: Settings) {
        self.settings = settings
        super.init()
    }

    /// A configuration like ``default``. Prefer ``default``.
    @available(*, deprecated, renamed: "URLSessionConfiguration.default", message: "Use .default instead.")
    public override init() {
        settings = URLSessionConfiguration.defaultSettings()
        super.init()
    }

    private static func defaultSettings() -> Settings {
        var settings = Settings()
        settings.httpCookieStorage = HTTPCookieStorage.shared
        settings.urlCredentialStorage = URLCredentialStorage.shared
        settings.urlCache = URLCache.shared
        return settings
    }

    /// A new configuration using the shared, persistent cookie, credential and cache stores.
    open class var `default`: URLSessionConfiguration {
        URLSessionConfiguration(settings: defaultSettings())
    }

    /// A new configuration whose cookie, credential and cache stores are private to it and kept in
    /// memory only: nothing is written to disk.
    open class var ephemeral: URLSessionConfiguration {
        var settings = Settings()
        settings.httpCookieStorage = HTTPCookieStorage()
        settings.urlCredentialStorage = URLCredentialStorage()
        settings.urlCache = URLCache(memoryCapacity: 4 * 1024 * 1024, diskCapacity: 0, diskPath: nil)
        return URLSessionConfiguration(settings: settings)
    }

    /// A configuration for a background session: its download tasks and upload tasks from a file
    /// are carried out by Courier's per-user transfer agent (`courier-agent`), so they go on after
    /// the app exits, and a session created later with the same `identifier` receives their events
    /// (`Documentation/Background.md`). Stores as ``default``; `waitsForConnectivity` is on.
    open class func background(withIdentifier identifier: String) -> URLSessionConfiguration {
        var settings = defaultSettings()
        settings.identifier = identifier
        settings.isBackground = true
        settings.waitsForConnectivity = true
        return URLSessionConfiguration(settings: settings)
    }

    /// Whether the system should launch the app when a background task ends. Linux cannot
    /// relaunch an app: the property is kept, and the events wait for the app's next session with
    /// the same identifier. `true` by default, as on Apple's platforms.
    open var sessionSendsLaunchEvents: Bool {
        get { self.get(\.sessionSendsLaunchEvents) }
        set { self.set(\.sessionSendsLaunchEvents, newValue) }
    }

    /// Whether sessions made with this configuration hand their downloads and file uploads to the
    /// transfer agent: made by ``background(withIdentifier:)``, with an identifier.
    var isBackgroundSession: Bool { lock.withLock { settings.isBackground && settings.identifier != nil } }

    /// The transfer agent's directories, when not those of the environment (tests).
    var backgroundAgentDirectories: BackgroundDirectories? {
        get { self.get(\.backgroundAgentDirectories) }
        set { self.set(\.backgroundAgentDirectories, newValue) }
    }

    /// The agent executable to start, before the usual search (tests).
    var backgroundAgentExecutable: String? {
        get { self.get(\.backgroundAgentExecutable) }
        set { self.set(\.backgroundAgentExecutable, newValue) }
    }

    /// Variables added to the environment of an agent this configuration's sessions start (tests:
    /// its idle timeout).
    var backgroundAgentEnvironment: [String: String] {
        get { self.get(\.backgroundAgentEnvironment) }
        set { self.set(\.backgroundAgentEnvironment, newValue) }
    }

    /// An independent copy; the stores are shared by reference, as on Apple's platforms.
    open override func copy() -> Any { copy(with: nil) }

    /// An independent copy; the stores are shared by reference.
    open func copy(with zone: NSZone?) -> Any {
        URLSessionConfiguration(settings: lock.withLock { settings })
    }

    private func get<T>(_ keyPath: KeyPath<Settings, T>) -> T {
        lock.withLock { settings[keyPath: keyPath] }
    }

    private func set<T>(_ keyPath: WritableKeyPath<Settings, T>, _ value: T) {
        lock.withLock { settings[keyPath: keyPath] = value }
    }

    /// The identifier of a background configuration; `nil` for default and ephemeral ones.
    open var identifier: String? {
        get { self.get(\.identifier) }
        set { self.set(\.identifier, newValue) }
    }

    /// The cache policy for requests that use `.useProtocolCachePolicy`.
    open var requestCachePolicy: URLRequest.CachePolicy {
        get { self.get(\.requestCachePolicy) }
        set { self.set(\.requestCachePolicy, newValue) }
    }

    /// The longest time, in seconds, a task may wait for more data before failing with `timedOut`
    /// (default 60).
    open var timeoutIntervalForRequest: TimeInterval {
        get { self.get(\.timeoutIntervalForRequest) }
        set { self.set(\.timeoutIntervalForRequest, newValue) }
    }

    /// The longest time, in seconds, a whole task may take before failing with `timedOut`
    /// (default seven days).
    open var timeoutIntervalForResource: TimeInterval {
        get { self.get(\.timeoutIntervalForResource) }
        set { self.set(\.timeoutIntervalForResource, newValue) }
    }

    /// The kind of traffic; informational on Linux.
    open var networkServiceType: URLRequest.NetworkServiceType {
        get { self.get(\.networkServiceType) }
        set { self.set(\.networkServiceType, newValue) }
    }

    /// Whether cellular networks may be used; informational on Linux.
    open var allowsCellularAccess: Bool {
        get { self.get(\.allowsCellularAccess) }
        set { self.set(\.allowsCellularAccess, newValue) }
    }

    /// Whether background transfers may wait for good conditions: the transfer agent starts a
    /// discretionary session's tasks after every other waiting task.
    open var isDiscretionary: Bool {
        get { self.get(\.isDiscretionary) }
        set { self.set(\.isDiscretionary, newValue) }
    }

    /// The shared container of a background session; always `nil` in Courier.
    open var sharedContainerIdentifier: String? { self.get(\.sharedContainerIdentifier) }

    /// Proxy settings for the session's connections, with Apple's keys (`HTTPEnable`/`HTTPProxy`/
    /// `HTTPPort`, `HTTPSEnable`/`HTTPSProxy`/`HTTPSPort`, `SOCKSEnable`/`SOCKSProxy`/`SOCKSPort`;
    /// proxy credentials come from proxy authentication challenges): http URLs use the HTTP proxy,
    /// https URLs the HTTPS proxy, SOCKS serves both when the scheme's own proxy is not set. `nil`
    /// (the default) uses the environment's `http_proxy`, `https_proxy` and `all_proxy`; any
    /// dictionary, even an empty one, replaces them.
    open var connectionProxyDictionary: [AnyHashable: Any]? {
        get { self.get(\.connectionProxyDictionary) }
        set { self.set(\.connectionProxyDictionary, newValue) }
    }

    /// Whether HTTP/1.1 pipelining may be used.
    @available(swift, deprecated: 6.1, message: "HTTP/1 pipelining has known compatibility issues, please adopt HTTP/2 and HTTP/3 instead")
    open var httpShouldUsePipelining: Bool {
        get { self.get(\.httpShouldUsePipelining) }
        set { self.set(\.httpShouldUsePipelining, newValue) }
    }

    /// Whether requests get cookies from the cookie store and responses' cookies are stored.
    open var httpShouldSetCookies: Bool {
        get { self.get(\.httpShouldSetCookies) }
        set { self.set(\.httpShouldSetCookies, newValue) }
    }

    /// Which cookies the session accepts.
    open var httpCookieAcceptPolicy: HTTPCookie.AcceptPolicy {
        get { self.get(\.httpCookieAcceptPolicy) }
        set { self.set(\.httpCookieAcceptPolicy, newValue) }
    }

    /// Headers added to every request that does not set them itself.
    open var httpAdditionalHeaders: [AnyHashable: Any]? {
        get { self.get(\.httpAdditionalHeaders) }
        set { self.set(\.httpAdditionalHeaders, newValue) }
    }

    /// The most connections the session opens to one host at a time (default 6).
    open var httpMaximumConnectionsPerHost: Int {
        get { self.get(\.httpMaximumConnectionsPerHost) }
        set { self.set(\.httpMaximumConnectionsPerHost, newValue) }
    }

    /// The cookie store, or `nil` for no cookies.
    open var httpCookieStorage: HTTPCookieStorage? {
        get { self.get(\.httpCookieStorage) }
        set { self.set(\.httpCookieStorage, newValue) }
    }

    /// The credential store, or `nil` for none.
    open var urlCredentialStorage: URLCredentialStorage? {
        get { self.get(\.urlCredentialStorage) }
        set { self.set(\.urlCredentialStorage, newValue) }
    }

    /// The response cache, or `nil` for no caching.
    open var urlCache: URLCache? {
        get { self.get(\.urlCache) }
        set { self.set(\.urlCache, newValue) }
    }

    /// Not supported on Linux; kept for source compatibility.
    @available(swift, deprecated: 6.1, message: "Not supported")
    open var shouldUseExtendedBackgroundIdleMode: Bool {
        get { self.get(\.shouldUseExtendedBackgroundIdleMode) }
        set { self.set(\.shouldUseExtendedBackgroundIdleMode, newValue) }
    }

    /// Whether a task whose host cannot be reached waits for connectivity instead of failing: the
    /// task delegate's `taskIsWaitingForConnectivity` is called once and the connection is retried
    /// with backoff until `timeoutIntervalForResource` ends it. Default `false`.
    open var waitsForConnectivity: Bool {
        get { self.get(\.waitsForConnectivity) }
        set { self.set(\.waitsForConnectivity, newValue) }
    }

    /// The oldest TLS version the session's connections accept (default TLS 1.2).
    open var tlsMinimumSupportedProtocolVersion: tls_protocol_version_t {
        get { self.get(\.tlsMinimumSupportedProtocolVersion) }
        set { self.set(\.tlsMinimumSupportedProtocolVersion, newValue) }
    }

    /// The newest TLS version the session's connections offer (default TLS 1.3).
    open var tlsMaximumSupportedProtocolVersion: tls_protocol_version_t {
        get { self.get(\.tlsMaximumSupportedProtocolVersion) }
        set { self.set(\.tlsMaximumSupportedProtocolVersion, newValue) }
    }

    /// The OpenSSH known-hosts file `sftp:` loads check server host keys against; `nil` (the
    /// default) means `~/.ssh/known_hosts` together with the system-wide `/etc/ssh/ssh_known_hosts`.
    ///
    /// Entries are read as OpenSSH writes them: plain, wildcard (`*`, `?`, `!`) and hashed (`|1|…`)
    /// host names, `[host]:port` for servers on ports other than 22, `@revoked` keys (refused
    /// outright); `@cert-authority` lines are skipped. Only the key types recorded for a host are
    /// negotiated with it. A host whose key is not in the file raises a challenge with
    /// `NSURLAuthenticationMethodSSHHostKey`, which only `URLCredential(sshHostKeyFingerprint:)`
    /// accepts (for the rest of the session); a host recorded with another key is refused. The file
    /// is written only with ``sshStrictHostKeyChecking`` `.acceptNew` (when `nil`,
    /// `~/.ssh/known_hosts` is written).
    open var sshKnownHostsURL: URL? {
        get { self.get(\.sshKnownHostsURL) }
        set { self.set(\.sshKnownHostsURL, newValue) }
    }

    /// What `sftp:` loads do with a server whose host key is not in the known-hosts files, like
    /// OpenSSH's `StrictHostKeyChecking`. `.yes` (the default) asks the delegate, which must accept
    /// the key explicitly with `URLCredential(sshHostKeyFingerprint:)`; `.acceptNew` records the
    /// new host's key in the known-hosts file (``sshKnownHostsURL``, else `~/.ssh/known_hosts`) and
    /// trusts it. A changed or revoked key is refused either way.
    open var sshStrictHostKeyChecking: SSHStrictHostKeyChecking {
        get { self.get(\.sshStrictHostKeyChecking) }
        set { self.set(\.sshStrictHostKeyChecking, newValue) }
    }

    /// Where `sftp:` loads look for the SSH agent and the default identity files; `nil` means this
    /// process's `SSH_AUTH_SOCK` and `~/.ssh`. Not public: tests point it at their own agent and keys.
    var sshUserEnvironment: SSHUserEnvironment? {
        get { self.get(\.sshUserEnvironment) }
        set { self.set(\.sshUserEnvironment, newValue) }
    }

    /// The certificate authorities TLS servers are verified against; `nil` means what this
    /// process's environment names when the session is created (`SSL_CERT_FILE`, `SSL_CERT_DIR`,
    /// see ``TLSTrustAnchors``), else the system's. Not public: tests point it at their own CA.
    var tlsTrustAnchors: TLSTrustAnchors? {
        get { self.get(\.tlsTrustAnchors) }
        set { self.set(\.tlsTrustAnchors, newValue) }
    }

    /// Courier's own setting, not Apple's: the most bytes a response body may have, counted after
    /// content decoding (gzip, deflate, br, zstd), before the task fails with
    /// `URLError.dataLengthExceedsMaximum` and its transfer is stopped. Nothing past the limit is
    /// delivered, and a download task's file is removed.
    ///
    /// `nil` (the default) caps only bodies the task collects in memory — completion-handler data
    /// and upload tasks, `data(for:)`, `upload(for:)` — at 1 GiB, so that a small compressed
    /// response that decodes to gigabytes cannot exhaust memory; bodies a delegate receives as
    /// they arrive, `bytes(for:)` and download tasks are not capped then. A value applies to every
    /// task of the session, whatever its kind; `Int64.max` lifts the in-memory cap.
    open var maximumResponseBodySize: Int64? {
        get { self.get(\.maximumResponseBodySize) }
        set { self.set(\.maximumResponseBodySize, newValue) }
    }

    /// The cap on bodies collected in memory when ``maximumResponseBodySize`` is `nil`
    /// (``ResponseBodyLimit/defaultInMemory``). Not public: tests lower it.
    var inMemoryResponseBodyLimit: Int64 {
        get { self.get(\.inMemoryResponseBodyLimit) }
        set { self.set(\.inMemoryResponseBodyLimit, newValue) }
    }

    /// The caps on one directory listing (``DirectoryListingLimits/standard``). Not public: tests
    /// lower them.
    var directoryListingCaps: DirectoryListingCaps {
        get { self.get(\.directoryListingCaps) }
        set { self.set(\.directoryListingCaps, newValue) }
    }

    /// Courier's own setting, not Apple's: where the session's tasks and connections log, with
    /// swift-log. Task lifecycle, each connection (address, reuse, TLS version and cipher, HTTP
    /// version) and SSH negotiation are logged at `debug`; what went over the wire (libcurl's trace:
    /// request and response lines and headers, FTP commands, body sizes) at `trace`, with
    /// credentials redacted (`Documentation/Observability.md`). Nothing is logged at `info` or above
    /// for loads that go as expected, and the wire trace is switched on in libcurl only while this
    /// logger's level is `trace`.
    ///
    /// The default is silent unless the `COURIER_LOG` environment variable names a level (`trace`,
    /// `debug`, `info`, `warning`, `error`), in which case records of that level and above go to
    /// standard error. Set it to a `Logger` of the app's own (for example one made by the handler
    /// the app bootstrapped `LoggingSystem` with) to send Courier's records there; its level and
    /// metadata are kept.
    open var logger: Logger {
        get { self.get(\.logger) }
        set { self.set(\.logger, newValue) }
    }

    /// Whether trace records keep credentials (header values, FTP passwords, URL passwords)
    /// instead of redacting them. Not public: only `courier --trace-secrets` sets it.
    package var logsSecrets: Bool {
        get { self.get(\.logsSecrets) }
        set { self.set(\.logsSecrets, newValue) }
    }

    /// `URLProtocol` subclasses the session asks, in order, before registered classes and the
    /// built-in handlers.
    open var protocolClasses: [AnyClass]? {
        get { self.get(\.protocolClasses) }
        set { self.set(\.protocolClasses, newValue) }
    }
}
