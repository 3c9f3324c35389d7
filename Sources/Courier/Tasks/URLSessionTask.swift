import Foundation
import Synchronization

/// One unit of work in a session: loading a URL into memory, uploading a body, or downloading to a
/// file.
///
/// Tasks are created suspended by a ``URLSession``; call ``resume()`` to start one. A task reports to
/// its completion handler or to its delegate on the session's delegate queue, ending with exactly one
/// completion, after which nothing more arrives. All methods are safe to call from any thread.
open class URLSessionTask: NSObject, NSCopying, @unchecked Sendable {
    /// The session that created the task, the argument of its delegate calls (the task calls
    /// nothing on it: it reaches its session only through ``context``); `nil` for a task created
    /// with `init()`.
    let session: URLSession?
    /// What the task needs from the session that created it, fixed at creation; `nil` for a task
    /// created with `init()`.
    let context: TaskSessionContext?
    let identifier: Int
    let initialRequest: URLRequest?
    let completion: TaskCompletion
    /// Where the body goes: derived from the class (a download task writes a file) and the
    /// completion (a handler collects it in memory, a delegate gets it chunk by chunk).
    let bodyDestination: TaskBodyDestination
    let uploadBody: UploadBody
    /// Resume data the task was created from, or the error decoding it gave.
    let resumeSource: Result<DownloadResumeData, URLError>?
    /// Why the task may not run at all (it was created on an invalidated session).
    let creationFailure: URLError?
    /// Guards ``core``: the state machine, the event queue and the load's data. Taken once per
    /// report; nothing is called out while it is held (see `Documentation/Concurrency.md`).
    let lock = Lock()
    /// Every access holds ``lock``, so the runtime's exclusivity check on each access (a
    /// thread-local access set, about 80 instructions, 20 or more times per load) is not needed.
    @exclusivity(unchecked) var core = TaskCore()
    /// The completion handler only resumes an async call (`data(for:)` and `upload(for:…)` with no
    /// delegate): when the completion is all that is left and no delegate may receive the task's
    /// metrics, it runs on the thread that ended the task instead of in an operation of the
    /// delegate queue (``scheduleDrain()``). Set once, before the task is resumed; an atomic so
    /// that every other task's drain checks it without taking the lock.
    let completesInPlace = Atomic<Bool>(false)

    /// Creates a task that belongs to no session; resuming it does nothing. Sessions create real
    /// tasks.
    public override init() {
        session = nil
        context = nil
        identifier = 0
        initialRequest = nil
        completion = .delegate
        bodyDestination = .delegate
        uploadBody = .none
        resumeSource = nil
        creationFailure = nil
        super.init()
    }

    init(session: URLSession, context: TaskSessionContext, identifier: Int, request: URLRequest?,
         completion: TaskCompletion, uploadBody: UploadBody = .none,
         resumeSource: Result<DownloadResumeData, URLError>? = nil, creationFailure: URLError? = nil) {
        self.session = session
        self.context = context
        self.identifier = identifier
        self.initialRequest = request
        self.completion = completion
        if Self.self is URLSessionDownloadTask.Type {
            bodyDestination = .file
        } else if case .data = completion {
            bodyDestination = .memory
        } else {
            bodyDestination = .delegate
        }
        self.uploadBody = uploadBody
        self.resumeSource = resumeSource
        self.creationFailure = creationFailure
        super.init()
        core.currentRequest = request
        if let length = uploadBody.knownLength { core.bytesExpectedToSend = length }
        core.bodyLimit = context.environment.responseBodyLimit.limit(collectsInMemory: bodyDestination == .memory)
    }

    /// A task is its own copy: copying returns the same object, as Apple documents.
    open override func copy() -> Any { self }

    /// A task is its own copy.
    open func copy(with zone: NSZone?) -> Any { self }

    // MARK: - Identity and requests

    /// A number identifying the task, unique within its session.
    open var taskIdentifier: Int { identifier }

    /// The request the task was created with (for a task created from resume data, the request
    /// being resumed).
    open var originalRequest: URLRequest? { initialRequest }

    /// The request being loaded now; differs from ``originalRequest`` after a redirect.
    open var currentRequest: URLRequest? { lock.withLock { core.currentRequest } }

    /// The response, once the server (or handler) has sent one.
    open var response: URLResponse? { lock.withLock { core.response } }

    /// A description of the task for the app's own use.
    open var taskDescription: String? {
        get { lock.withLock { core.taskDescription } }
        set { lock.withLock { core.taskDescription = newValue } }
    }

    /// A delegate for this task alone. Task-level messages go to it instead of the session's
    /// delegate; the session keeps it until the task completes.
    open var delegate: (any URLSessionTaskDelegate)? {
        get { lock.withLock { core.delegate } }
        set { lock.withLock { core.delegate = newValue } }
    }

    // MARK: - Progress counters

    /// Body bytes received so far (after content decoding).
    open var countOfBytesReceived: Int64 { lock.withLock { core.bytesReceived } }
    /// Body bytes sent so far.
    open var countOfBytesSent: Int64 { lock.withLock { core.bytesSent } }
    /// The body length to send, or `NSURLSessionTransferSizeUnknown`.
    open var countOfBytesExpectedToSend: Int64 { lock.withLock { core.bytesExpectedToSend } }
    /// The body length expected, from the response, or `NSURLSessionTransferSizeUnknown`.
    open var countOfBytesExpectedToReceive: Int64 { lock.withLock { core.bytesExpectedToReceive } }

    /// The app's estimate of the bytes it will receive; informational.
    open var countOfBytesClientExpectsToReceive: Int64 {
        get { lock.withLock { core.clientExpectsToReceive } }
        set { lock.withLock { core.clientExpectsToReceive = newValue } }
    }

    /// The app's estimate of the bytes it will send; informational.
    open var countOfBytesClientExpectsToSend: Int64 {
        get { lock.withLock { core.clientExpectsToSend } }
        set { lock.withLock { core.clientExpectsToSend = newValue } }
    }

    /// The task's progress: total and completed units are body bytes. Created on first use, so tasks
    /// nobody watches pay nothing for it.
    open var progress: Progress {
        lock.withLock {
            if let existing = core.progress { return existing }
            let created = Progress(totalUnitCount: max(core.bytesExpectedToReceive, 0))
            created.completedUnitCount = core.bytesReceived
            if core.machine.isCompleted { created.totalUnitCount = max(core.bytesReceived, 1); created.completedUnitCount = created.totalUnitCount }
            core.progress = created
            return created
        }
    }

    /// When a background session's transfer agent may start the task at the earliest; no effect in
    /// other sessions, as on Apple's platforms.
    open var earliestBeginDate: Date? {
        get { lock.withLock { core.earliestBeginDate } }
        set { lock.withLock { core.earliestBeginDate = newValue } }
    }

    /// A hint, from 0.0 to 1.0, of how the task should be prioritised against the session's others.
    open var priority: Float {
        get { lock.withLock { core.priority } }
        set { lock.withLock { core.priority = min(max(newValue, 0), 1) } }
    }

    // MARK: - State

    /// Where the task is: suspended, running, canceling, completed.
    open var state: URLSessionTask.State { lock.withLock { core.machine.publicState } }

    /// The error the task completed with; `nil` while it runs or after success.
    open var error: (any Error)? { lock.withLock { core.error } }

    /// Starts the task, or continues it after ``suspend()``.
    open func resume() { resumeTask() }

    /// Pauses the task: no callbacks arrive, and built-in handlers stop reading, until ``resume()``.
    open func suspend() { suspendTask() }

    /// Cancels the task. It completes with `URLError.cancelled` (also when it was never resumed);
    /// cancelling a completed task does nothing.
    open func cancel() { cancelTask(producingResumeData: nil) }

    // MARK: - Hooks for kinds of task

    /// Called once the task's end is decided — its completion queued by `complete` or `cancel` —
    /// with no lock held. A WebSocket task fails the operations that wait on its connection.
    func didDecideCompletion(error: (any Error)?) {}

    /// The request the task's handler is resolved for and started with. A WebSocket task loads a
    /// redirect's http or https URL as ws or wss.
    func requestForHandler(_ request: URLRequest) -> URLRequest { request }
}

extension URLSessionTask {
    /// The states a task passes through.
    public enum State: Int, Sendable {
        /// Loading.
        case running
        /// Created and not yet resumed, or paused by `suspend()`.
        case suspended
        /// `cancel()` was called; the completion is on its way.
        case canceling
        /// Finished, failed or cancelled; nothing more happens.
        case completed
    }
}

extension URLSessionTask: ProgressReporting {}

extension URLSessionTask {
    /// The priority tasks get by default (0.5).
    public static let defaultPriority: Float = 0.5
    /// A low priority (0.25).
    public static let lowPriority: Float = 0.25
    /// A high priority (0.75).
    public static let highPriority: Float = 0.75
}
