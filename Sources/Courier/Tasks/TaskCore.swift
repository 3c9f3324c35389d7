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

/// Where a task's body goes, fixed when the task is made from its class and its completion.
enum TaskBodyDestination: Sendable {
    /// Collected in memory for a data (or upload) task's completion handler.
    case memory
    /// Delivered chunk by chunk to a data (or upload) task's delegate (`didReceive data`).
    case delegate
    /// Written to a download task's file.
    case file
}

/// The handler instance serving a task's current request, what its resolution declared it can do,
/// and the serial queue it is driven on (none for ``HandlerCapabilities/concurrentStartStop``).
/// Sendable because the instance is only touched on its own queue (`perform`), or directly when
/// it guards its own state (`start`, `stop`, `resumeProducing`). Which generation its reports carry
/// is the task's state machine's to know.
///
/// A class, immutable: the state machine's states carry it and are copied whenever the task reads
/// them, and a copy is then one reference count instead of one per field.
final class ActiveLoad: @unchecked Sendable {
    let instance: URLProtocol
    /// The handler as one of Courier's own, for the operations ``handler`` declares; `nil` for an app's class.
    let operations: BuiltInURLProtocol?
    /// The handler's class and capabilities, as the loader resolved them.
    let handler: ResolvedHandler
    /// The serial queue the handler's calls run on; `nil` for a handler that guards its own state
    /// (``HandlerCapabilities/concurrentStartStop``), which needs none.
    private let queue: DispatchQueue?
    /// The handler guards its own state (``HandlerCapabilities/concurrentStartStop``).
    var isConcurrent: Bool { queue == nil }

    init(instance: ResolvedHandler.Instance, handler: ResolvedHandler) {
        self.instance = instance.handler
        self.operations = instance.operations
        self.handler = handler
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
///
/// Where the task is in its life is ``machine`` alone (`Tasks/TaskStateMachine.swift`); what it
/// still has to deliver is ``events``; the rest is the data a load produces (counters, the
/// response, the body, the file, metrics) and the app's settings.
struct TaskCore {
    /// The task's lifecycle.
    var machine = TaskStateMachine<ActiveLoad, URLSessionDownloadTask>()
    /// The steps the task's delegate or completion handler still has to receive.
    var events = TaskEventQueue()
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
    /// When the next `didWriteData` goes out, and the total reported so far.
    var writeReports = WriteReportThrottle()
    /// The idle timeout (`timeoutIntervalForRequest`) in nanoseconds; 0 for none.
    var requestTimeout: UInt64 = 0
    /// The whole-task timeout (`timeoutIntervalForResource`) in nanoseconds; 0 for none.
    var resourceTimeout: UInt64 = 0
    var redirectCount = 0
    /// Monotonic nanoseconds of the last sign of life from the handler.
    var lastActivity: UInt64 = 0
    /// Monotonic nanoseconds when the task first started loading.
    var loadStarted: UInt64 = 0
    /// The current handler honoured the resume offset.
    var resumedAtOffset: Int64?
    var resumeValidator: String?
    /// The handler supports resume data.
    var handlerCanResume = false
    /// When the task started and each load's record, for metrics.
    var metrics = TaskMetricsRecorder()
    /// `taskIsWaitingForConnectivity` was sent.
    var toldWaitingForConnectivity = false
    /// Where the current response may be cached, as its handler said; `.notAllowed` when the task
    /// will not cache it (see `URLSessionTask+Caching.swift`).
    var cacheStoragePolicy: URLCache.StoragePolicy = .notAllowed
    /// The copy of the body kept for the cache, for a data task whose body goes to its delegate.
    var cacheBody: Data?
    /// The most body bytes the response may have and still be cached.
    var cacheBodyLimit = 0

    /// Body bytes received and not yet consumed: queued for the delegate, or for the download
    /// file's writer (``DownloadFile/bytesQueued``, the file's count, under its leaf lock). What
    /// back-pressure weighs (``TaskStateMachine/canAcceptMoreData(generation:pendingBytes:)``).
    var waitingBodyBytes: Int { events.pendingBytes + (downloadFile?.bytesQueued ?? 0) }
}

/// Monotonic time in nanoseconds.
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    DispatchTime.now().uptimeNanoseconds
}
