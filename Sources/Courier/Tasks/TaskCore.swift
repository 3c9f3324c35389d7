import Foundation

/// How a task hands over its result.
enum TaskCompletion: @unchecked Sendable {
    /// To the session's (or the task's own) delegate, step by step.
    case delegate
    /// To a completion handler with the whole body in memory.
    case data(@Sendable (Data?, URLResponse?, (any Error)?) -> Void)
    /// To a completion handler with the downloaded file's location.
    case download(@Sendable (URL?, URLResponse?, (any Error)?) -> Void)

    var usesDelegate: Bool {
        if case .delegate = self { return true }
        return false
    }
}

/// The three kinds of work a task can do.
enum TaskKind: Sendable {
    case data, upload, download
}

/// Where a task is in its life, beyond the public `state`.
enum TaskPhase {
    /// Created, never resumed.
    case idle
    /// Resumed, waiting for something before a handler can start (a body stream from the delegate).
    case preparing
    /// A handler is loading.
    case loading(ActiveLoad)
    /// The final step is queued; nothing else happens.
    case finishing
    /// Completed.
    case done
}

/// The handler instance serving a task's current request, what its resolution declared it can do,
/// and the serial queue it is driven on (none for ``HandlerCapabilities/concurrentStartStop``).
/// Sendable because the instance is only touched on its own queue (`perform`), or directly when
/// it guards its own state (`start`, `stop`, `resumeProducing`).
struct ActiveLoad: @unchecked Sendable {
    let instance: URLProtocol
    /// The handler as one of Courier's own, for the operations ``handler`` declares; `nil` for an app's class.
    let operations: BuiltInURLProtocol?
    /// The handler's class and capabilities, as the loader resolved them.
    let handler: ResolvedHandler
    /// The serial queue the handler's calls run on; `nil` for a handler that guards its own state
    /// (``HandlerCapabilities/concurrentStartStop``), which needs none.
    private let queue: DispatchQueue?
    let generation: Int
    /// The handler guards its own state (``HandlerCapabilities/concurrentStartStop``).
    var isConcurrent: Bool { queue == nil }

    init(instance: ResolvedHandler.Instance, handler: ResolvedHandler, generation: Int) {
        self.instance = instance.handler
        self.operations = instance.operations
        self.handler = handler
        self.generation = generation
        self.queue = handler.capabilities.contains(.concurrentStartStop)
            ? nil
            : DispatchQueue(label: "courier.handler", target: DispatchQueue.global())
    }

    /// Runs `body` with the handler on its queue (on a global queue for a concurrent handler).
    func perform(_ body: @escaping @Sendable (URLProtocol) -> Void) {
        let handler = UncheckedSendable(instance)
        (queue ?? DispatchQueue.global()).async { body(handler.value) }
    }

    /// Runs `body` with the handler now, on this thread, when the handler allows it
    /// (``HandlerCapabilities/concurrentStartStop``); on its queue otherwise. For `startLoading`, `stopLoading` and
    /// `resumeProducing` only, and never while holding a lock the handler's reports take.
    func performDirectlyIfConcurrent(_ body: @escaping @Sendable (URLProtocol) -> Void) {
        if isConcurrent {
            body(instance)
        } else {
            perform(body)
        }
    }
}

/// A task's mutable state; the task guards it with its lock.
struct TaskCore {
    var state: URLSessionTask.State = .suspended
    var phase: TaskPhase = .idle
    /// Increases for every handler instance; reports from an older instance are ignored.
    var generation = 0
    var currentRequest: URLRequest?
    var response: URLResponse?
    var error: (any Error)?
    var bytesReceived: Int64 = 0
    var bytesExpectedToReceive: Int64 = NSURLSessionTransferSizeUnknown
    var bytesSent: Int64 = 0
    var bytesExpectedToSend: Int64 = NSURLSessionTransferSizeUnknown
    var clientExpectsToReceive: Int64 = NSURLSessionTransferSizeUnknown
    var clientExpectsToSend: Int64 = NSURLSessionTransferSizeUnknown
    var priority: Float = URLSessionTask.defaultPriority
    var taskDescription: String?
    var delegate: (any URLSessionTaskDelegate)?
    var earliestBeginDate: Date?
    var progress: Progress?
    /// The body, for a data task with a completion handler.
    var body = Data()
    /// The most body bytes the task may receive (``ResponseBodyLimit``); `nil`: no limit.
    var bodyLimit: Int64?
    /// The file, for a download task.
    var downloadFile: DownloadFile?
    /// Bytes written to the download file not yet reported by `didWriteData`.
    var unreportedWrittenBytes: Int64 = 0
    /// The `totalBytesWritten` reported so far: the running sum of reported `bytesWritten` (from the
    /// resume offset).
    var reportedWrittenTotal: Int64 = 0
    /// A delayed `didWriteData` is scheduled for throttled bytes.
    var writeReportDeferred = false
    /// Monotonic nanoseconds of the last `didWriteData` scheduled.
    var lastWriteReport: UInt64 = 0
    /// A `didWriteData` step is queued and will report ``unreportedWrittenBytes``.
    var writeReportQueued = false
    /// The idle timeout (`timeoutIntervalForRequest`) in nanoseconds; 0 for none.
    var requestTimeout: UInt64 = 0
    /// The whole-task timeout (`timeoutIntervalForResource`) in nanoseconds; 0 for none.
    var resourceTimeout: UInt64 = 0
    var redirectCount = 0
    /// Monotonic nanoseconds of the last sign of life from the handler.
    var lastActivity: UInt64 = 0
    /// Monotonic nanoseconds when the task first started loading.
    var loadStarted: UInt64 = 0
    /// The handler is paused waiting for capacity.
    var producerWaiting = false
    /// The current handler honoured the resume offset.
    var resumedAtOffset: Int64?
    var resumeValidator: String?
    /// The handler supports resume data.
    var handlerCanResume = false
    /// When the task started and each load's record, for metrics.
    var metrics = TaskMetricsRecorder()
    /// The handler is waiting for connectivity: the idle timeout does not apply.
    var waitingForConnectivity = false
    /// `taskIsWaitingForConnectivity` was sent.
    var toldWaitingForConnectivity = false
    /// Body chunks held while a data task's delegate decides what to do with the response
    /// (`nil` when not holding): nothing may be delivered before the disposition.
    var heldBody: [Data]?
    /// The error the queued completion carries (`nil`: success), once the phase is `.finishing`.
    var completionError: (any Error)?
    /// The download task this data task became (`.becomeDownload`); late reports go to it.
    var successor: URLSessionDownloadTask?
    /// Set by `cancel(byProducingResumeData:)`: keep the partial file.
    var keepPartialFile = false
    /// Where the current response may be cached, as its handler said; `.notAllowed` when the task
    /// will not cache it (see `URLSessionTask+Caching.swift`).
    var cacheStoragePolicy: URLCache.StoragePolicy = .notAllowed
    /// The copy of the body kept for the cache, for a data task whose body goes to its delegate.
    var cacheBody: Data?
    /// The most body bytes the response may have and still be cached.
    var cacheBodyLimit = 0
}

/// Monotonic time in nanoseconds.
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    DispatchTime.now().uptimeNanoseconds
}
