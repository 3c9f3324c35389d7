import Foundation

/// Coordinates a group of related transfer tasks: the Linux implementation of Apple's
/// `URLSession`, dispatching each request by URL scheme to a protocol handler.
///
/// Create one session per configuration and reuse it for many tasks. Delegate calls and completion
/// handlers for one session run one at a time on its ``delegateQueue``. The session keeps a strong
/// reference to its delegate until it is invalidated.
open class URLSession: NSObject, @unchecked Sendable {
    private let storedConfiguration: URLSessionConfiguration
    private let storedDelegateQueue: OperationQueue
    /// How requests find their handler.
    let resolver: ProtocolResolver
    /// Settings read on every task, captured once.
    let settings: SessionSettings
    /// What built-in handlers see of this session.
    let environment: HandlerEnvironment
    /// The configuration's `urlCache`: the task layer looks responses up in it and stores them;
    /// handlers never see it.
    let cache: URLCache?
    let isShared: Bool
    /// The transfer agent's side of a background session (`Background/`); `nil` for other sessions.
    let background: BackgroundSessionLink?

    let lock = Lock()
    private var currentDelegate: (any URLSessionDelegate)?
    var registry = SessionTaskRegistry()
    let timeoutMonitor = TaskTimeoutMonitor()
    /// Puts the tasks' drains on ``delegateQueue``.
    let drains: TaskDrainScheduler

    /// The session for simple requests: default configuration, no delegate. It cannot be
    /// invalidated.
    open class var shared: URLSession { sharedSession }
    private static let sharedSession = URLSession(configuration: .default, delegate: nil, delegateQueue: nil, isShared: true)

    /// A session with `configuration` and no delegate.
    public init(configuration: URLSessionConfiguration) {
        let setup = Setup(configuration: configuration, delegateQueue: nil)
        storedConfiguration = setup.configuration
        storedDelegateQueue = setup.delegateQueue
        drains = TaskDrainScheduler(queue: setup.delegateQueue)
        currentDelegate = nil
        settings = setup.settings
        resolver = setup.resolver
        environment = setup.environment
        cache = setup.configuration.urlCache
        isShared = false
        background = setup.background
        super.init()
        timeoutMonitor.session = self
        background?.start(session: self)
    }

    /// A session with `configuration`, reporting to `delegate` on `queue` (a new serial queue when
    /// `nil`).
    public init(configuration: URLSessionConfiguration, delegate: (any URLSessionDelegate)?, delegateQueue queue: OperationQueue?) {
        let setup = Setup(configuration: configuration, delegateQueue: queue)
        storedConfiguration = setup.configuration
        storedDelegateQueue = setup.delegateQueue
        drains = TaskDrainScheduler(queue: setup.delegateQueue)
        currentDelegate = delegate
        settings = setup.settings
        resolver = setup.resolver
        environment = setup.environment
        cache = setup.configuration.urlCache
        isShared = false
        background = setup.background
        super.init()
        timeoutMonitor.session = self
        background?.start(session: self)
    }

    /// The shared session's initializer: like the public ones, and marked as not invalidatable.
    private init(configuration: URLSessionConfiguration, delegate: (any URLSessionDelegate)?, delegateQueue queue: OperationQueue?, isShared: Bool) {
        let setup = Setup(configuration: configuration, delegateQueue: queue)
        storedConfiguration = setup.configuration
        storedDelegateQueue = setup.delegateQueue
        drains = TaskDrainScheduler(queue: setup.delegateQueue)
        currentDelegate = delegate
        settings = setup.settings
        resolver = setup.resolver
        environment = setup.environment
        cache = setup.configuration.urlCache
        self.isShared = isShared
        background = nil
        super.init()
        timeoutMonitor.session = self
    }

    /// What every initializer derives from its arguments. The public initializers are designated
    /// (as Apple's are, so subclasses can call them), hence this shared helper instead of
    /// delegating to one another.
    private struct Setup {
        let configuration: URLSessionConfiguration
        let delegateQueue: OperationQueue
        let settings: SessionSettings
        let resolver: ProtocolResolver
        var environment: HandlerEnvironment
        let background: BackgroundSessionLink?

        init(configuration: URLSessionConfiguration, delegateQueue queue: OperationQueue?) {
            let copy = (configuration.copy() as? URLSessionConfiguration) ?? URLSessionConfiguration.default
            self.configuration = copy
            if let queue {
                delegateQueue = queue
            } else {
                delegateQueue = SessionDelegateQueue(name: "Courier.URLSession.delegateQueue")
            }
            settings = SessionSettings(copy)
            background = copy.isBackgroundSession ? copy.identifier.map { BackgroundSessionLink(identifier: $0, configuration: copy) } : nil
            environment = HandlerEnvironment(resources: HandlerSessionResources(),
                                         cookieStorage: copy.httpCookieStorage,
                                         shouldSetCookies: copy.httpShouldSetCookies,
                                         cookieAcceptPolicy: copy.httpCookieAcceptPolicy,
                                         credentialStorage: copy.urlCredentialStorage,
                                         maximumConnectionsPerHost: copy.httpMaximumConnectionsPerHost,
                                         proxyDictionary: copy.connectionProxyDictionary)
            environment.waitsForConnectivity = copy.waitsForConnectivity
            environment.sshKnownHostsURL = copy.sshKnownHostsURL
            environment.sshStrictHostKeyChecking = copy.sshStrictHostKeyChecking
            environment.sshUserEnvironment = copy.sshUserEnvironment ?? .process
            let lowest = copy.tlsMinimumSupportedProtocolVersion.rawValue
            environment.tlsVersions = lowest...max(lowest, copy.tlsMaximumSupportedProtocolVersion.rawValue)
            environment.tlsTrustAnchors = copy.tlsTrustAnchors ?? TLSTrustAnchors.process
            environment.responseBodyLimit = ResponseBodyLimit(configured: copy.maximumResponseBodySize,
                                                              inMemory: copy.inMemoryResponseBodyLimit)
            environment.listingCaps = copy.directoryListingCaps
            environment.logger = copy.logger
            environment.logsSecrets = copy.logsSecrets
            resolver = ProtocolResolver(configured: (copy.protocolClasses ?? []).compactMap { ($0 as? URLProtocol.Type).map(ProtocolClassBox.init) },
                                        builtIns: BuiltInHandlers.table)
        }
    }

    /// The operation queue delegate calls and completion handlers run on.
    open var delegateQueue: OperationQueue { storedDelegateQueue }

    /// The session's delegate; `nil` once the session has been invalidated.
    open var delegate: (any URLSessionDelegate)? { lock.withLock { currentDelegate } }

    /// A copy of the configuration the session was created with.
    open var configuration: URLSessionConfiguration {
        (storedConfiguration.copy() as? URLSessionConfiguration) ?? storedConfiguration
    }

    private var storedDescription: String?
    /// A description of the session for the app's own use.
    open var sessionDescription: String? {
        get { lock.withLock { storedDescription } }
        set { lock.withLock { storedDescription = newValue } }
    }

    // MARK: - Creating tasks (tasks start suspended: call `resume()`)

    /// A data task for `request`, reporting to the delegate.
    open func dataTask(with request: URLRequest) -> URLSessionDataTask {
        dataTask(request, .delegate)
    }

    /// A data task for `url`, reporting to the delegate.
    open func dataTask(with url: URL) -> URLSessionDataTask {
        dataTask(URLRequest(url: url), .delegate)
    }

    /// A data task for `request` whose body, response and error go to `completionHandler` on the
    /// delegate queue; the delegate gets no data-delivery calls for it.
    open func dataTask(with request: URLRequest, completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void) -> URLSessionDataTask {
        dataTask(request, .data(completionHandler))
    }

    /// A data task for `url` whose result goes to `completionHandler`.
    open func dataTask(with url: URL, completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void) -> URLSessionDataTask {
        dataTask(URLRequest(url: url), .data(completionHandler))
    }

    /// An upload task sending the file at `fileURL`, reporting to the delegate.
    open func uploadTask(with request: URLRequest, fromFile fileURL: URL) -> URLSessionUploadTask {
        uploadTask(request, .file(fileURL), .delegate)
    }

    /// An upload task sending `bodyData`, reporting to the delegate.
    open func uploadTask(with request: URLRequest, from bodyData: Data) -> URLSessionUploadTask {
        uploadTask(request, .data(bodyData), .delegate)
    }

    /// An upload task whose body stream the delegate provides through `needNewBodyStream`.
    open func uploadTask(withStreamedRequest request: URLRequest) -> URLSessionUploadTask {
        uploadTask(request, .stream, .delegate)
    }

    /// An upload task sending the file at `fileURL`, its result going to `completionHandler`.
    open func uploadTask(with request: URLRequest, fromFile fileURL: URL, completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void) -> URLSessionUploadTask {
        uploadTask(request, .file(fileURL), .data(completionHandler))
    }

    /// An upload task sending `bodyData` (or no body), its result going to `completionHandler`.
    open func uploadTask(with request: URLRequest, from bodyData: Data?, completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void) -> URLSessionUploadTask {
        uploadTask(request, bodyData.map(UploadBody.data) ?? .none, .data(completionHandler))
    }

    /// A download task for `request`, reporting to the delegate.
    open func downloadTask(with request: URLRequest) -> URLSessionDownloadTask {
        downloadTask(request, .delegate)
    }

    /// A download task for `url`, reporting to the delegate.
    open func downloadTask(with url: URL) -> URLSessionDownloadTask {
        downloadTask(URLRequest(url: url), .delegate)
    }

    /// A download task continuing from resume data, reporting to the delegate. Invalid resume data
    /// makes the task fail with `URLError.cannotDecodeRawData` when resumed.
    open func downloadTask(withResumeData resumeData: Data) -> URLSessionDownloadTask {
        let decoded = Result { () throws(URLError) in try DownloadResumeData.decode(resumeData) }
        return downloadTask(Self.resumeRequest(decoded), .delegate, resume: decoded)
    }

    /// A download task for `request` whose file location, response and error go to
    /// `completionHandler`. The file is removed when the handler returns.
    open func downloadTask(with request: URLRequest, completionHandler: @escaping @Sendable (URL?, URLResponse?, (any Error)?) -> Void) -> URLSessionDownloadTask {
        downloadTask(request, .download(completionHandler))
    }

    /// A download task for `url` whose result goes to `completionHandler`.
    open func downloadTask(with url: URL, completionHandler: @escaping @Sendable (URL?, URLResponse?, (any Error)?) -> Void) -> URLSessionDownloadTask {
        downloadTask(URLRequest(url: url), .download(completionHandler))
    }

    /// A download task continuing from resume data, its result going to `completionHandler`.
    open func downloadTask(withResumeData resumeData: Data, completionHandler: @escaping @Sendable (URL?, URLResponse?, (any Error)?) -> Void) -> URLSessionDownloadTask {
        let decoded = Result { () throws(URLError) in try DownloadResumeData.decode(resumeData) }
        return downloadTask(Self.resumeRequest(decoded), .download(completionHandler), resume: decoded)
    }

    /// A WebSocket task for a `ws:` or `wss:` URL, reporting to a `URLSessionWebSocketDelegate`.
    open func webSocketTask(with url: URL) -> URLSessionWebSocketTask {
        webSocketTask(URLRequest(url: url), protocols: nil)
    }

    /// A WebSocket task offering `protocols` as subprotocols (`Sec-WebSocket-Protocol`).
    open func webSocketTask(with url: URL, protocols: [String]) -> URLSessionWebSocketTask {
        webSocketTask(URLRequest(url: url), protocols: protocols)
    }

    /// A WebSocket task for `request`: its header fields, cookies and credentials go into the
    /// handshake, as for a data task.
    open func webSocketTask(with request: URLRequest) -> URLSessionWebSocketTask {
        webSocketTask(request, protocols: nil)
    }

    /// A stream task that connects to `hostname` (a name, or an IPv4 or IPv6 address) on TCP
    /// `port` when resumed. A name that cannot be resolved fails the task with `cannotFindHost`, a
    /// refused connection with `cannotConnectToHost`, a connect longer than the configuration's
    /// `timeoutIntervalForRequest` with `timedOut`; the whole task is bounded by
    /// `timeoutIntervalForResource`. (`open`, in the class body, as on Apple's platforms;
    /// FoundationNetworking has no stream tasks.)
    open func streamTask(withHostName hostname: String, port: Int) -> URLSessionStreamTask {
        makeStreamTask(host: hostname, port: port)
    }


    // MARK: - Invalidation

    /// Lets running tasks finish, refuses new ones, then calls `didBecomeInvalidWithError(nil)` and
    /// releases the delegate. No effect on ``shared``.
    open func finishTasksAndInvalidate() {
        guard !isShared else { return }
        let idle: Bool = lock.withLock {
            guard !registry.invalidating else { return false }
            registry.invalidating = true
            return registry.tasks.isEmpty
        }
        background?.invalidate(cancelTasks: false)
        if idle { completeInvalidation() }
    }

    /// Cancels every task, refuses new ones, then calls `didBecomeInvalidWithError(nil)` and releases
    /// the delegate. No effect on ``shared``.
    open func invalidateAndCancel() {
        guard !isShared else { return }
        let (first, tasks): (Bool, [URLSessionTask]) = lock.withLock {
            let first = !registry.invalidating
            registry.invalidating = true
            return (first, Array(registry.tasks.values))
        }
        for task in tasks { task.cancel() }
        if first { background?.invalidate(cancelTasks: true) }
        if first && tasks.isEmpty { completeInvalidation() }
    }

    /// Sends `didBecomeInvalidWithError` once, then drops the delegate.
    func completeInvalidation() {
        let delegate: (any URLSessionDelegate)?? = lock.withLock {
            guard !registry.invalidated else { return .none }
            registry.invalidated = true
            return .some(currentDelegate)
        }
        guard case .some(let delegate) = delegate else { return }
        environment.resources.shutDownAll()
        background?.close()
        delegateQueue.addOperation { [self] in
            delegate?.urlSession(self, didBecomeInvalidWithError: nil)
            lock.withLock { currentDelegate = nil }
        }
    }

    // MARK: - Tasks bookkeeping

    /// Registers a new task, or returns why it may not run.
    func register<Task: URLSessionTask>(_ make: (Int, URLError?, TaskSessionContext) -> Task) -> Task {
        // Read outside the lock: a subclass may override it with code that takes the lock.
        let queue = delegateQueue
        let task = lock.withLock {
            registry.lastIdentifier += 1
            let refusal = registry.invalidating
                ? URLError(.unknown, url: nil, description: "The session was invalidated; it cannot run new tasks.")
                : nil
            let task = make(registry.lastIdentifier, refusal, sharedTaskContextLocked(delegateQueue: queue))
            if refusal == nil { registry.tasks[task.identifier] = task }
            return task
        }
        task.log(.created)
        return task
    }

    /// The tasks the session still tracks: a task is forgotten just after its completion is delivered.
    var liveTasks: [URLSessionTask] {
        lock.withLock { Array(registry.tasks.values) }
    }

    /// The tasks not yet completed, in the order they were created. A task leaves the list when its
    /// completion is delivered (or when it became a download task), even before the session forgets it.
    var unfinishedTasks: [URLSessionTask] {
        liveTasks.filter { $0.state != .completed }.sorted { $0.identifier < $1.identifier }
    }

    /// Calls `completionHandler` on the delegate queue with the session's data, upload and download
    /// tasks that have not completed (listed when the handler runs), created-but-not-resumed ones included.
    open func getTasksWithCompletionHandler(_ completionHandler: @escaping @Sendable ([URLSessionDataTask], [URLSessionUploadTask], [URLSessionDownloadTask]) -> Void) {
        delegateQueue.addOperation { [self] in
            let tasks = unfinishedTasks
            let uploads = tasks.compactMap { $0 as? URLSessionUploadTask }
            let data = tasks.compactMap { $0 as? URLSessionDataTask }.filter { !($0 is URLSessionUploadTask) }
            let downloads = tasks.compactMap { $0 as? URLSessionDownloadTask }
            completionHandler(data, uploads, downloads)
        }
    }

    /// Calls `completionHandler` on the delegate queue with every task not yet completed (listed when
    /// the handler runs), created-but-not-resumed ones included, in the order they were created.
    open func getAllTasks(completionHandler: @escaping @Sendable ([URLSessionTask]) -> Void) {
        delegateQueue.addOperation { [self] in completionHandler(unfinishedTasks) }
    }

    /// Every task of the session not yet completed, created-but-not-resumed ones included, in the
    /// order they were created; listed on the delegate queue, as ``getAllTasks(completionHandler:)`` does.
    public var allTasks: [URLSessionTask] {
        get async {
            await withCheckedContinuation { continuation in
                getAllTasks { continuation.resume(returning: $0) }
            }
        }
    }

    /// Empties the configuration's cookie, credential and cache stores, then calls
    /// `completionHandler` on the delegate queue.
    open func reset(completionHandler: @escaping @Sendable () -> Void) {
        let configuration = storedConfiguration
        delegateQueue.addOperation {
            if let cookies = configuration.httpCookieStorage {
                cookies.removeCookies(since: .distantPast)
            }
            if let credentials = configuration.urlCredentialStorage {
                for (space, byUser) in credentials.allCredentials {
                    for credential in byUser.values { credentials.remove(credential, for: space) }
                }
            }
            configuration.urlCache?.removeAllCachedResponses()
            completionHandler()
        }
    }

    /// Writes pending cookies and credentials to their files, then calls `completionHandler` on the
    /// delegate queue.
    open func flush(completionHandler: @escaping @Sendable () -> Void) {
        let configuration = storedConfiguration
        delegateQueue.addOperation {
            configuration.httpCookieStorage?.flush()
            configuration.urlCredentialStorage?.flush()
            completionHandler()
        }
    }
}

/// The session's tasks and invalidation state, guarded by the session's lock.
struct SessionTaskRegistry {
    var tasks: [Int: URLSessionTask] = [:]
    var lastIdentifier = 0
    var invalidating = false
    var invalidated = false
    /// What every task of the session is handed (made with the first task).
    var taskContext: TaskSessionContext?
}
