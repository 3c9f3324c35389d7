import Foundation

/// What a background task knows of itself in the app: where the agent says it is, its counters,
/// response and error. The agent holds the task; this mirrors it for the task's properties.
final class BackgroundTaskLink: Sendable {
    /// The task's kind in the agent.
    let kind: AgentTaskKind
    /// The session side this task talks through.
    let session: BackgroundSessionLink
    private let state: Locked<BackgroundTaskState>

    /// A link for a new task (`submitted == nil`) or one the agent already holds.
    init(kind: AgentTaskKind, session: BackgroundSessionLink, submitted: AgentTaskPhase?) {
        self.kind = kind
        self.session = session
        state = Locked(BackgroundTaskState(phase: submitted.map { .submitted($0) } ?? .created))
    }

    /// Changes the state and returns what `body` returns.
    func update<R: Sendable>(_ body: (inout BackgroundTaskState) -> R) -> R {
        state.withLock { body(&$0) }
    }

    /// The task's public state.
    var taskState: URLSessionTask.State { state.withLock { $0.phase.taskState } }
    /// The counters.
    var counts: AgentByteCounts { state.withLock { $0.counts } }
    /// The last response.
    var response: URLResponse? { state.withLock { $0.response } }
    /// The error the task completed with.
    var error: URLError? { state.withLock { $0.error } }
}

/// The mirrored state of one background task (see ``BackgroundTaskLink``).
struct BackgroundTaskState: Sendable {
    /// Where the task is.
    enum Phase: Sendable, Equatable {
        /// Made, not yet resumed: the agent does not know it.
        case created
        /// The agent holds it.
        case submitted(AgentTaskPhase)
        /// Cancelled; its completion is on its way.
        case canceling
        /// Its completion was delivered (or is being delivered).
        case completed

        /// `URLSessionTask.State`.
        var taskState: URLSessionTask.State {
            switch self {
            case .created: return .suspended
            case .submitted(let phase): return phase.taskState
            case .canceling: return .canceling
            case .completed: return .completed
            }
        }
    }

    var phase: Phase
    /// `cancel(byProducingResumeData:)`'s handler, called with the completion's resume data.
    var resumeDataHandler: UncheckedSendable<(Data?) -> Void>?
    var counts = AgentByteCounts()
    var response: URLResponse?
    var error: URLError?
}

/// A download task of a background session: the agent carries it out, and this object forwards
/// `resume()`, `suspend()` and `cancel()` to it (each returns once the agent stored the change) and
/// shows the agent's state and counters.
final class BackgroundDownloadTask: URLSessionDownloadTask, @unchecked Sendable {
    /// The task's agent side.
    let background: BackgroundTaskLink
    /// `downloadTask(withResumeData:)`'s resume data, sent to the agent with the task.
    let resumeData: Data?

    init(session: URLSession, context: TaskSessionContext, identifier: Int, request: URLRequest?, resumeData: Data? = nil,
         background: BackgroundTaskLink) {
        self.background = background
        self.resumeData = resumeData
        super.init(session: session, context: context, identifier: identifier, request: request, completion: .delegate)
    }

    /// Hands the task to the agent (first call) or resumes it there.
    override func resume() { background.session.resume(self, background) }
    /// Suspends the task in the agent.
    override func suspend() { background.session.suspend(self, background) }
    /// Cancels the task in the agent; its completion follows with `URLError.cancelled`.
    override func cancel() { background.session.cancel(self, background) }
    /// Cancels the task in the agent keeping what it downloaded: on the delegate queue, just before
    /// `didCompleteWithError(cancelled)`, the handler gets the resume data the agent produced (the
    /// partial file stays in the agent's `downloads/`, as a failed download's), or `nil` when there
    /// is none (never resumed, already ended, or the agent unreachable).
    override func cancel(byProducingResumeData completionHandler: @escaping (Data?) -> Void) {
        background.session.cancel(self, background, producingResumeData: UncheckedSendable(completionHandler))
    }
    /// The agent's view of the task.
    override var state: URLSessionTask.State { background.taskState }
    /// Bytes received, as the agent last reported.
    override var countOfBytesReceived: Int64 { background.counts.received }
    /// Bytes expected, as the agent last reported.
    override var countOfBytesExpectedToReceive: Int64 { background.counts.expectedToReceive }
    /// Bytes sent, as the agent last reported.
    override var countOfBytesSent: Int64 { background.counts.sent }
    /// Bytes to send, as the agent last reported.
    override var countOfBytesExpectedToSend: Int64 { background.counts.expectedToSend }
    /// The response the agent reported with the completion.
    override var response: URLResponse? { background.response }
    /// The error the task completed with.
    override var error: (any Error)? { background.error }
}
