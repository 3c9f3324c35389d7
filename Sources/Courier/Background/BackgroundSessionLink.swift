import Foundation

/// The side of a background `URLSession` that talks to the transfer agent.
///
/// Made by the session when its configuration came from
/// `URLSessionConfiguration.background(withIdentifier:)`. It connects (starting the agent when
/// none answers), says `hello` with the identifier, adopts the agent's tasks for it (so
/// `getAllTasks` lists them), and then delivers the agent's events on the delegate queue
/// (``BackgroundSessionLink+Delivery.swift``). Download tasks and upload-from-file tasks go to
/// the agent; `resume()`, `suspend()` and `cancel()` return once the agent stored them. When the
/// connection drops it reconnects, starting a new agent if needed, until the session is invalidated.
final class BackgroundSessionLink: Sendable {
    /// The configuration's identifier.
    let identifier: String
    let directories: BackgroundDirectories
    let executable: String?
    let launchEnvironment: [String: String]
    let settings: AgentSessionSettings
    let state = Locked(LinkState())

    /// The link's mutable state.
    struct LinkState {
        /// The session, once it has finished its initializer; it owns the link.
        weak var session: URLSession?
        /// The connection to the agent: none, one being made, made, or never again.
        var connection = BackgroundConnectionState.disconnected
        /// The current connection.
        var client: BackgroundAgentClient? { connection.client }
        /// Why the last connection attempt failed.
        var connectError: URLError?
        /// Events and local completions waiting for the delegate queue, in order.
        var deliveries: [BackgroundDelivery] = []
        /// Whether a drain is scheduled or running on the delegate queue.
        var draining = false
        /// Held while a (re)connection adopts the agent's tasks: events wait until it is done.
        var adopting = false
        /// The highest stored event sequence taken (an event seen again after a reconnect is skipped).
        var lastSequence: Int64 = 0
        /// The highest stored event sequence delivered (its delegate calls returned): one that comes
        /// again was acknowledged on a connection that died first, and is acknowledged again.
        var lastDelivered: Int64 = 0
        /// Reconnection attempts since the connection was lost.
        var reconnectAttempts = 0
    }

    /// A link for `configuration` (whose identifier is `identifier`).
    init(identifier: String, configuration: URLSessionConfiguration) {
        self.identifier = identifier
        directories = configuration.backgroundAgentDirectories ?? BackgroundDirectories.resolve()
        executable = configuration.backgroundAgentExecutable
        launchEnvironment = configuration.backgroundAgentEnvironment
        settings = AgentSessionSettings(configuration)
    }

    /// Attaches the session (at the end of its initializer) and connects.
    func start(session: URLSession) {
        state.withLock { $0.session = session }
        _ = try? connectIfNeeded()
    }

    /// The current connection, connecting first when there is none. One attempt at a time: a
    /// caller that comes while another thread connects waits for that attempt and shares its
    /// outcome. Once the link is closed (the session invalidated) it never connects again.
    @discardableResult
    func connectIfNeeded(url: URL? = nil) throws(URLError) -> BackgroundAgentClient {
        enum Step {
            case use(BackgroundAgentClient)
            case join(BackgroundConnectionAttempt)
            case connect(BackgroundConnectionAttempt)
            case refuse
        }
        let step: Step = state.withLock { link in
            switch link.connection {
            case .connected(let client):
                return .use(client)
            case .connecting(let attempt):
                return .join(attempt)
            case .closed:
                return .refuse
            case .disconnected:
                let attempt = BackgroundConnectionAttempt()
                link.connection = .connecting(attempt)
                return .connect(attempt)
            }
        }
        switch step {
        case .use(let client):
            return client
        case .join(let attempt):
            return try attempt.wait(url: url)
        case .refuse:
            throw Self.invalidated(url)
        case .connect(let attempt):
            let result = connect(url: url)
            attempt.finish(result)
            switch result {
            case .success(let client): return client
            case .failure(let error): throw error
            }
        }
    }

    /// Connects, says `hello` and adopts the agent's tasks; the link's `connection` is
    /// `connecting` (this attempt) meanwhile, and is `connected` or `disconnected` after (unless
    /// the link was closed meanwhile: then the new connection is closed again).
    private func connect(url: URL?) -> Result<BackgroundAgentClient, URLError> {
        let client: BackgroundAgentClient
        do {
            client = try BackgroundAgentClient.connect(
                directories: directories, executable: executable, launchEnvironment: launchEnvironment, url: url,
                onEvent: { [weak self] event, client in self?.received(.event(event), via: client) },
                onClose: { [weak self] client in self?.connectionLost(client) })
        } catch {
            attemptFailed(error)
            return .failure(error)
        }
        state.withLock { $0.adopting = true }
        var reply: AgentReply?
        var attempts = 0
        while reply == nil {
            do {
                reply = try client.request(.hello(session: identifier, settings: settings), url: url)
            } catch {
                // A process that used the identifier may have just exited, its connection not yet
                // closed in the agent: ask again for a moment (not once the link is closed).
                attempts += 1
                if error.code == .backgroundSessionInUseByAnotherProcess, attempts < 40,
                   !state.withLock({ $0.connection.isClosed }) {
                    usleep(50_000)
                    continue
                }
                client.close()
                attemptFailed(error)
                return .failure(error)
            }
        }
        if case .welcome(let next, let tasks)? = reply { adopt(tasks, nextTaskID: next) }
        let outcome = state.withLock { link -> (stored: Bool, drain: Bool) in
            link.adopting = false
            guard !link.connection.isClosed else { return (false, false) }
            link.connection = .connected(client)
            link.connectError = nil
            link.reconnectAttempts = 0
            return (true, link.claimDrain())
        }
        guard outcome.stored else {
            // Invalidated while connecting: give the identifier back at once.
            client.close()
            return .failure(Self.invalidated(url))
        }
        if outcome.drain { scheduleDrain() }
        return .success(client)
    }

    /// A connection attempt failed with `error`: no connection now (unless the link was closed).
    private func attemptFailed(_ error: URLError) {
        state.withLock { link in
            link.adopting = false
            link.connectError = error
            if case .connecting = link.connection { link.connection = .disconnected }
        }
    }

    /// Why a closed link does not connect.
    private static func invalidated(_ url: URL?) -> URLError {
        URLError(.backgroundSessionWasDisconnected, url: url,
                 description: "The background session was invalidated; it no longer connects to the transfer agent.")
    }

    /// The connection `lost` ended (`nil`: a reconnection failed): reconnect with a growing delay
    /// unless the session is gone, the link closed, or another connection has taken its place.
    private func connectionLost(_ lost: BackgroundAgentClient?) {
        let attempt: Int? = state.withLock { link in
            if let current = link.connection.client {
                guard current === lost else { return nil }
                link.connection = .disconnected
            }
            guard !link.connection.isClosed, link.session != nil else { return nil }
            link.reconnectAttempts += 1
            return link.reconnectAttempts
        }
        guard let attempt, attempt <= 30 else { return }
        let delay = min(0.1 * Double(1 << min(attempt, 6)), 5)
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in
            guard let self else { return }
            // `connectIfNeeded` looks at the link under its lock: a link closed meanwhile refuses.
            if (try? self.connectIfNeeded()) == nil { self.connectionLost(nil) }
        }
    }

    /// Makes task objects for the agent's tasks the session does not have yet (a new process
    /// after the app exited), updates those it has, and keeps new identifiers above the agent's.
    private func adopt(_ snapshots: [AgentTaskSnapshot], nextTaskID: Int) {
        guard let session = state.withLock({ $0.session }) else { return }
        for snapshot in snapshots {
            let existing = session.lock.withLock { session.registry.tasks[snapshot.taskID] }
            if let existing, let link = Self.link(of: existing) {
                link.update { task in
                    if task.phase != .completed, task.phase != .canceling { task.phase = .submitted(snapshot.phase) }
                    task.counts = snapshot.counts
                }
                continue
            }
            let request = snapshot.request.urlRequest()
            let link = BackgroundTaskLink(kind: snapshot.kind, session: self, submitted: snapshot.phase)
            link.update { $0.counts = snapshot.counts; $0.response = snapshot.response?.urlResponse() }
            let task: URLSessionTask
            let queue = session.delegateQueue
            let context = session.lock.withLock { session.sharedTaskContextLocked(delegateQueue: queue) }
            switch snapshot.kind {
            case .download:
                task = BackgroundDownloadTask(session: session, context: context, identifier: snapshot.taskID, request: request,
                                              background: link)
            case .upload:
                task = BackgroundUploadTask(session: session, context: context, identifier: snapshot.taskID, request: request,
                                            bodyFile: snapshot.uploadFile.map { URL(fileURLWithPath: $0) }, background: link)
            }
            task.taskDescription = snapshot.taskDescription
            session.lock.withLock { session.registry.tasks[snapshot.taskID] = task }
        }
        session.lock.withLock {
            session.registry.lastIdentifier = max(session.registry.lastIdentifier, nextTaskID - 1)
        }
    }

    /// The agent side of a background task.
    static func link(of task: URLSessionTask) -> BackgroundTaskLink? {
        (task as? BackgroundDownloadTask)?.background ?? (task as? BackgroundUploadTask)?.background
    }

    // MARK: - Task operations (each returns once the agent stored it)

    /// First call: hands the task to the agent. Later: resumes it there.
    func resume(_ task: URLSessionTask, _ link: BackgroundTaskLink) {
        let phase = link.update { $0.phase }
        let url = task.originalRequest?.url
        switch phase {
        case .created:
            guard let spec = spec(for: task, link) else {
                completeLocally(task, link, URLError(.badURL, url: url, description: "The background task has no usable request."))
                return
            }
            do {
                let reply = try connectIfNeeded(url: url).request(.enqueue(spec), url: url)
                guard case .committed(let snapshot) = reply else { throw URLError(.unknown, url: url) }
                link.update { if $0.phase == .created { $0.phase = .submitted(snapshot.phase) } }
            } catch {
                completeLocally(task, link, error)
            }
        case .submitted(.suspended):
            if (try? connectIfNeeded(url: url).request(.resume(taskID: task.taskIdentifier), url: url)) != nil {
                link.update { if $0.phase == .submitted(.suspended) { $0.phase = .submitted(.running) } }
            }
        case .submitted, .canceling, .completed:
            return
        }
    }

    /// Suspends a task the agent holds.
    func suspend(_ task: URLSessionTask, _ link: BackgroundTaskLink) {
        guard case .submitted(let phase) = link.update({ $0.phase }), phase == .running || phase == .waiting else { return }
        let url = task.originalRequest?.url
        if (try? connectIfNeeded(url: url).request(.suspend(taskID: task.taskIdentifier), url: url)) != nil {
            link.update { if case .submitted = $0.phase { $0.phase = .submitted(.suspended) } }
        }
    }

    /// Cancels a task: in the agent when it holds it (the completion comes back as an event),
    /// here when it was never resumed or the agent cannot be reached. With `handler`
    /// (`cancel(byProducingResumeData:)`), the agent keeps what the download has and the handler
    /// gets its resume data with the completion.
    func cancel(_ task: URLSessionTask, _ link: BackgroundTaskLink,
                producingResumeData handler: UncheckedSendable<(Data?) -> Void>? = nil) {
        let previous = link.update { task -> BackgroundTaskState.Phase in
            let previous = task.phase
            switch previous {
            case .created, .submitted:
                if case .submitted = previous { task.phase = .canceling }
                if handler != nil { task.resumeDataHandler = handler }
            case .canceling, .completed:
                break
            }
            return previous
        }
        let url = task.originalRequest?.url
        let cancelled = URLError(.cancelled, url: url, description: "The task was cancelled.")
        switch previous {
        case .created:
            completeLocally(task, link, cancelled)
        case .submitted:
            let request: AgentRequest = handler == nil ? .cancel(taskID: task.taskIdentifier)
                : .cancelProducingResumeData(taskID: task.taskIdentifier)
            do {
                _ = try connectIfNeeded(url: url).request(request, url: url)
            } catch {
                completeLocally(task, link, cancelled)
            }
        case .canceling, .completed:
            if let handler { task.session?.delegateQueue.addOperation { handler.value(nil) } }
        }
    }

    /// What `enqueue` sends for `task`.
    private func spec(for task: URLSessionTask, _ link: BackgroundTaskLink) -> AgentTaskSpec? {
        guard let request = task.originalRequest, let (record, secrets) = AgentRequestRecord.make(from: request) else { return nil }
        let file = (task as? BackgroundUploadTask)?.bodyFile
        return AgentTaskSpec(taskID: task.taskIdentifier, kind: link.kind, request: record, secrets: secrets,
                             uploadFile: file?.path, earliestBeginDate: task.earliestBeginDate,
                             taskDescription: task.taskDescription, resumeData: (task as? BackgroundDownloadTask)?.resumeData,
                             clientExpectsToReceive: Self.hint(task.countOfBytesClientExpectsToReceive),
                             clientExpectsToSend: Self.hint(task.countOfBytesClientExpectsToSend))
    }

    /// A byte-count hint as the agent takes it: `nil` when unknown (negative).
    private static func hint(_ bytes: Int64) -> Int64? {
        bytes >= 0 ? bytes : nil
    }

    /// Ends a task in this process (never resumed, refused, or the agent unreachable).
    private func completeLocally(_ task: URLSessionTask, _ link: BackgroundTaskLink, _ error: any Error) {
        let record = AgentErrorRecord(error, url: task.originalRequest?.url)
        // `error` shows the reason at once, also to a caller whose delegate queue is held (`courier --background`).
        link.update { if $0.error == nil { $0.error = record.urlError } }
        received(.local(task: task, completion: AgentCompletion(file: nil, error: record, response: nil,
                                                                counts: link.counts, body: nil)))
    }

    // MARK: - Invalidation

    /// The session was invalidated (`cancelTasks`: by `invalidateAndCancel`): tell the agent and
    /// close the connection once the session's tasks are done with it.
    func invalidate(cancelTasks: Bool) {
        let client = state.withLock { $0.client }
        _ = try? client?.request(.invalidate(cancelTasks: cancelTasks), url: nil)
    }

    /// The session finished invalidating: disconnect for good.
    func close() {
        let client = state.withLock { link -> BackgroundAgentClient? in
            defer { link.connection = .closed }
            return link.connection.client
        }
        client?.close()
    }
}

// Making the session's task objects: downloads and uploads from a file that report to the delegate
// go to the agent; everything else runs in the process, as Apple documents for background sessions.
extension BackgroundSessionLink {
    /// A download task the agent carries out, or `nil` when this one runs in the process (a
    /// completion handler, or resume data that does not decode: that task fails as in any session).
    /// `downloadTask(withResumeData:)` goes to the agent with its resume data.
    func makeDownloadTask(_ session: URLSession, _ identifier: Int, _ context: TaskSessionContext, _ request: URLRequest?,
                          _ completion: TaskCompletion,
                          resume: Result<DownloadResumeData, URLError>?) -> URLSessionDownloadTask? {
        guard case .delegate = completion else { return nil }
        var resumeData: Data?
        switch resume {
        case .none: break
        case .failure: return nil
        case .success(let decoded):
            guard let encoded = decoded.encoded() else { return nil }
            resumeData = encoded
        }
        return BackgroundDownloadTask(session: session, context: context, identifier: identifier, request: request,
                                      resumeData: resumeData,
                                      background: BackgroundTaskLink(kind: .download, session: self, submitted: nil))
    }

    /// An upload task from a file the agent carries out, or `nil` when this one runs in the process
    /// (from `Data` or a stream, which cannot outlive it).
    func makeUploadTask(_ session: URLSession, _ identifier: Int, _ context: TaskSessionContext, _ request: URLRequest,
                        _ body: UploadBody,
                        _ completion: TaskCompletion) -> URLSessionUploadTask? {
        guard case .delegate = completion, case .file(let file) = body else { return nil }
        return BackgroundUploadTask(session: session, context: context, identifier: identifier, request: request, bodyFile: file,
                                    background: BackgroundTaskLink(kind: .upload, session: self, submitted: nil))
    }
}
