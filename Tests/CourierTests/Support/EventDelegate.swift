import Foundation
@testable import Courier

/// One delegate message, as ``EventDelegate`` records it.
enum DelegateEvent: Sendable, Equatable, CustomStringConvertible {
    case needStream(task: Int)
    case sentBody(task: Int, total: Int64, expected: Int64)
    case redirect(task: Int, status: Int, to: String?)
    case challenge(task: Int, method: String)
    case response(task: Int)
    case data(task: Int, count: Int)
    case resumed(task: Int, offset: Int64, expected: Int64)
    case wrote(task: Int, bytes: Int64, total: Int64, expected: Int64)
    case finishedDownload(task: Int)
    /// `didBecome downloadTask`: `task` is the data task, `download` the new download task.
    case becameDownload(task: Int, download: Int)
    case metrics(task: Int)
    /// `code` is nil on success, the `URLError` code's raw value, or -1 for another error.
    case complete(task: Int, code: Int?)
    case invalid(hasError: Bool)

    var task: Int? {
        switch self {
        case .needStream(let t), .sentBody(let t, _, _), .redirect(let t, _, _), .challenge(let t, _), .response(let t),
             .data(let t, _), .resumed(let t, _, _), .wrote(let t, _, _, _), .finishedDownload(let t), .metrics(let t),
             .complete(let t, _), .becameDownload(let t, _):
            return t
        case .invalid:
            return nil
        }
    }

    /// The message's short name, for comparing orders.
    var name: String {
        switch self {
        case .needStream: return "needStream"
        case .sentBody: return "sentBody"
        case .redirect: return "redirect"
        case .challenge: return "challenge"
        case .response: return "response"
        case .data: return "data"
        case .resumed: return "resumed"
        case .wrote: return "wrote"
        case .finishedDownload: return "finishedDownload"
        case .becameDownload: return "becameDownload"
        case .metrics: return "metrics"
        case .complete: return "complete"
        case .invalid: return "invalid"
        }
    }

    var description: String { "\(name)#\(task ?? 0)" }
}

/// What `didFinishDownloadingTo` saw.
struct DownloadObservation: Sendable {
    var location: URL
    var existedDuringCall: Bool
    var content: Data?
}

/// A session and task delegate that records every message (in a lock-protected list), checks the
/// queue each runs on and that no two run at once, and lets a test answer the questions a delegate
/// is asked through ``Hooks``.
final class EventDelegate: NSObject, URLSessionDataDelegate, URLSessionDownloadDelegate, @unchecked Sendable {
    /// How the delegate answers; every hook is optional and runs on the delegate queue.
    struct Hooks: @unchecked Sendable {
        var response: ((URLSessionDataTask, URLResponse, @escaping @Sendable (URLSession.ResponseDisposition) -> Void) -> Void)?
        var data: ((URLSessionDataTask, Data) -> Void)?
        /// `didBecome downloadTask` (after a `.becomeDownload` disposition).
        var becameDownload: ((URLSessionDataTask, URLSessionDownloadTask) -> Void)?
        var wrote: ((URLSessionDownloadTask, _ bytes: Int64, _ total: Int64, _ expected: Int64) -> Void)?
        var finishedDownload: ((URLSessionDownloadTask, URL) -> Void)?
        var redirect: ((URLSessionTask, HTTPURLResponse, URLRequest, @escaping @Sendable (URLRequest?) -> Void) -> Void)?
        var challenge: ((URLSessionTask, URLAuthenticationChallenge,
                         @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) -> Void)?
        var bodyStream: ((URLSessionTask) -> InputStream?)?
        var complete: ((URLSessionTask, (any Error)?) -> Void)?
        /// Seconds each message sleeps while marked as running, to make overlaps visible.
        var callbackDelay: TimeInterval = 0
        /// Read the downloaded file's content in `didFinishDownloadingTo` (on by default).
        var readDownloads = true
    }

    private struct State {
        var events: [DelegateEvent] = []
        var bodies: [Int: Data] = [:]
        var errors: [Int: any Error] = [:]
        var responses: [Int: URLResponse] = [:]
        var downloads: [Int: DownloadObservation] = [:]
        var metrics: [Int: URLSessionTaskMetrics] = [:]
        var redirectResponses: [Int: [HTTPURLResponse]] = [:]
        var completed: Set<Int> = []
        var afterCompletion: [DelegateEvent] = []
        var queues: Set<ObjectIdentifier> = []
        var callsOffAnyQueue = 0
        var inFlight = 0
        var maxInFlight = 0
    }

    let hooks: Hooks
    private let state = Locked(State())

    init(_ hooks: Hooks = Hooks()) {
        self.hooks = hooks
        super.init()
    }

    // MARK: Reading what happened

    /// Every message so far, in order.
    var events: [DelegateEvent] { state.current.events }

    /// The messages about `task`, in order.
    func events(for task: URLSessionTask) -> [DelegateEvent] {
        events.filter { $0.task == task.taskIdentifier }
    }

    /// The names of the messages about `task`, runs of the same name collapsed into one.
    func collapsedNames(for task: URLSessionTask) -> [String] {
        var names: [String] = []
        for event in events(for: task) where names.last != event.name { names.append(event.name) }
        return names
    }

    /// The body bytes `didReceive data` delivered for `task`.
    func body(of task: URLSessionTask) -> Data { state.current.bodies[task.taskIdentifier] ?? Data() }
    /// The error `didCompleteWithError` delivered for `task` (nil on success or before completion).
    func error(of task: URLSessionTask) -> (any Error)? { state.current.errors[task.taskIdentifier] }
    /// The response `didReceive response` delivered for `task`.
    func response(of task: URLSessionTask) -> URLResponse? { state.current.responses[task.taskIdentifier] }
    /// What `didFinishDownloadingTo` saw for `task`.
    func download(of task: URLSessionTask) -> DownloadObservation? { state.current.downloads[task.taskIdentifier] }
    /// The metrics delivered for `task`.
    func metrics(of task: URLSessionTask) -> URLSessionTaskMetrics? { state.current.metrics[task.taskIdentifier] }
    /// The redirect responses delivered for `task`.
    func redirectResponses(of task: URLSessionTask) -> [HTTPURLResponse] { state.current.redirectResponses[task.taskIdentifier] ?? [] }
    /// How many `didCompleteWithError` calls `task` got.
    func completionCount(of task: URLSessionTask) -> Int {
        events(for: task).filter { $0.name == "complete" }.count
    }
    /// How many `didBecomeInvalidWithError` calls arrived.
    var invalidationCount: Int { events.filter { $0.name == "invalid" }.count }
    /// Messages that arrived about a task after its `didCompleteWithError`.
    var eventsAfterCompletion: [DelegateEvent] { state.current.afterCompletion }
    /// The most messages that ever ran at the same time.
    var maxConcurrentCallbacks: Int { state.current.maxInFlight }
    /// The operation queues messages ran on.
    var queuesSeen: Set<ObjectIdentifier> { state.current.queues }
    /// Messages that ran outside any operation queue.
    var callsOffAnyQueue: Int { state.current.callsOffAnyQueue }

    /// Waits (bounded) until `task` completed; false when it did not.
    func waitForCompletion(of task: URLSessionTask, timeout: TimeInterval = testWaitLimit) async -> Bool {
        let id = task.taskIdentifier
        return await waitUntil(timeout: timeout) { self.state.current.completed.contains(id) }
    }

    /// Waits (bounded) until `count` tasks completed.
    func waitForCompletions(_ count: Int, timeout: TimeInterval = testWaitLimit) async -> Bool {
        await waitUntil(timeout: timeout) { self.state.current.completed.count >= count }
    }

    /// Waits (bounded) until an event matching `predicate` was recorded.
    func waitForEvent(timeout: TimeInterval = testWaitLimit, _ predicate: @escaping @Sendable (DelegateEvent) -> Bool) async -> Bool {
        await waitUntil(timeout: timeout) { self.state.current.events.contains(where: predicate) }
    }

    // MARK: Recording

    private func enter(_ event: DelegateEvent, _ update: (inout State) -> Void = { _ in }) {
        let queue = OperationQueue.current
        state.withLock { s in
            if let task = event.task, s.completed.contains(task) { s.afterCompletion.append(event) }
            s.events.append(event)
            if let queue { s.queues.insert(ObjectIdentifier(queue)) } else { s.callsOffAnyQueue += 1 }
            s.inFlight += 1
            s.maxInFlight = max(s.maxInFlight, s.inFlight)
            update(&s)
        }
        if hooks.callbackDelay > 0 { Thread.sleep(forTimeInterval: hooks.callbackDelay) }
    }

    private func leave() {
        state.withLock { $0.inFlight -= 1 }
    }

    // MARK: URLSessionDelegate

    func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {
        enter(.invalid(hasError: error != nil))
        leave()
    }

    // MARK: URLSessionTaskDelegate

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        enter(.redirect(task: task.taskIdentifier, status: response.statusCode, to: request.url?.absoluteString)) {
            $0.redirectResponses[task.taskIdentifier, default: []].append(response)
        }
        defer { leave() }
        if let hook = hooks.redirect { hook(task, response, request, completionHandler) } else { completionHandler(request) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        enter(.challenge(task: task.taskIdentifier, method: challenge.protectionSpace.authenticationMethod))
        defer { leave() }
        if let hook = hooks.challenge { hook(task, challenge, completionHandler) } else { completionHandler(.performDefaultHandling, nil) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void) {
        enter(.needStream(task: task.taskIdentifier))
        defer { leave() }
        let stream = hooks.bodyStream.map { $0(task) } ?? task.originalRequest?.httpBodyStream
        completionHandler(stream)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
                    totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {
        enter(.sentBody(task: task.taskIdentifier, total: totalBytesSent, expected: totalBytesExpectedToSend))
        leave()
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics) {
        enter(.metrics(task: task.taskIdentifier)) { $0.metrics[task.taskIdentifier] = metrics }
        leave()
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let code: Int? = error.map { ($0 as? URLError)?.code.rawValue ?? -1 }
        enter(.complete(task: task.taskIdentifier, code: code)) { s in
            if let error { s.errors[task.taskIdentifier] = error }
        }
        hooks.complete?(task, error)
        // Marked complete last, so a test waiting for completion sees everything the hook did.
        state.withLock { $0.completed.insert(task.taskIdentifier) }
        leave()
    }

    // MARK: URLSessionDataDelegate

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        enter(.response(task: dataTask.taskIdentifier)) { $0.responses[dataTask.taskIdentifier] = response }
        defer { leave() }
        if let hook = hooks.response { hook(dataTask, response, completionHandler) } else { completionHandler(.allow) }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        enter(.data(task: dataTask.taskIdentifier, count: data.count)) { $0.bodies[dataTask.taskIdentifier, default: Data()].append(data) }
        defer { leave() }
        hooks.data?(dataTask, data)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didBecome downloadTask: URLSessionDownloadTask) {
        enter(.becameDownload(task: dataTask.taskIdentifier, download: downloadTask.taskIdentifier))
        defer { leave() }
        hooks.becameDownload?(dataTask, downloadTask)
    }

    // MARK: URLSessionDownloadDelegate

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        let exists = FileManager.default.fileExists(atPath: location.path)
        let content = hooks.readDownloads ? try? Data(contentsOf: location) : nil
        enter(.finishedDownload(task: downloadTask.taskIdentifier)) {
            $0.downloads[downloadTask.taskIdentifier] = DownloadObservation(location: location, existedDuringCall: exists, content: content)
        }
        defer { leave() }
        hooks.finishedDownload?(downloadTask, location)
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        enter(.wrote(task: downloadTask.taskIdentifier, bytes: bytesWritten, total: totalBytesWritten, expected: totalBytesExpectedToWrite))
        defer { leave() }
        hooks.wrote?(downloadTask, bytesWritten, totalBytesWritten, totalBytesExpectedToWrite)
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64,
                    expectedTotalBytes: Int64) {
        enter(.resumed(task: downloadTask.taskIdentifier, offset: fileOffset, expected: expectedTotalBytes))
        leave()
    }
}
