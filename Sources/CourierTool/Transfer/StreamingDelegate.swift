import Foundation
import Courier

/// What one load produced: the response (if one arrived), how many body bytes went to the sink, and
/// the failure (nil when the load succeeded).
struct FetchOutcome: Sendable {
    var response: URLResponse?
    var bytes: Int64 = 0
    var failure: ToolFailure?
    /// Body bytes sent (uploads).
    var bytesSent: Int64 = 0
    /// How many redirects were followed.
    var redirects = 0
    /// Set when the response asked for another try (``ResponseDecision/retry(after:)``).
    var retryAfter: TimeInterval??
}

/// What a ``ResponseCheck`` decides when a response arrives, before its body flows.
enum ResponseDecision: Sendable {
    /// Load and deliver the body.
    case proceed
    /// The load succeeded with this response; its body is not wanted (`-I` on a non-HTTP URL,
    /// a resumed file that is already complete).
    case skipBody
    /// Stop with this failure; nothing of the body is written.
    case fail(ToolFailure)
    /// Stop, writing nothing, so that the caller tries again (after the server's `Retry-After`, if any).
    case retry(after: TimeInterval?)
}

/// Decides, when a response arrives and before its body flows, whether the load goes on. It may also
/// write to the sink (the `-i` headers).
typealias ResponseCheck = @Sendable (URLResponse) -> ResponseDecision

/// The per-task delegate behind one fetch: streams each body chunk to a sink as it arrives, answers
/// redirects and challenges by its ``TransferPolicy``, feeds the progress meter, and turns the end of
/// the task into one ``FetchOutcome``.
///
/// When the sink is a ``DownloadFileSink`` that takes a download file (`-o FILE`), the data task
/// becomes a download task once the response has passed its check: the body is then written where
/// it is received, with no hop per chunk to the delegate queue, and the finished file is handed to
/// the sink.
///
/// It also handles the two ways the tool stops a load itself, ``stop(with:)``: `-m` running out and
/// Ctrl-C. Both cancel the task and record why, and if the session never reports the end the outcome
/// is delivered anyway after a short grace period, so a fetch always ends.
final class StreamingDelegate: NSObject, URLSessionDataDelegate, URLSessionDownloadDelegate, @unchecked Sendable {
    private struct State {
        var continuation: CheckedContinuation<FetchOutcome, Never>?
        var task: URLSessionTask?
        var outcome = FetchOutcome()
        var stopped = false
        var skipped = false
        var finished = false
    }

    /// How long a stopped load may take to report its end before the outcome is delivered without it.
    static let stopGracePeriod: TimeInterval = 2

    private let sink: any OutputSink
    private let check: ResponseCheck
    private let policy: TransferPolicy
    private let progress: ProgressMeter.Slot?
    private let state = Locked(State())

    init(sink: any OutputSink, check: @escaping ResponseCheck, policy: TransferPolicy = TransferPolicy(),
         progress: ProgressMeter.Slot? = nil)
    {
        self.sink = sink
        self.check = check
        self.policy = policy
        self.progress = progress
    }

    /// Remembers where the outcome goes and starts `task`, unless the fetch was stopped already.
    func start(_ task: URLSessionTask, continuation: CheckedContinuation<FetchOutcome, Never>) {
        let alreadyStopped = state.withLock { state -> Bool in
            state.continuation = continuation
            state.task = task
            return state.stopped
        }
        if alreadyStopped {
            finish(error: nil)
        } else {
            task.delegate = self
            task.resume()
        }
    }

    /// Stops the load with `failure` (the first reason given wins) and cancels its task.
    func stop(with failure: ToolFailure) {
        let task = state.withLock { state -> URLSessionTask? in
            guard !state.finished else { return nil }
            if state.outcome.failure == nil { state.outcome.failure = failure }
            state.stopped = true
            return state.task
        }
        task?.cancel()
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.stopGracePeriod) { [self] in
            let started = state.withLock { $0.continuation != nil }
            if started { finish(error: nil) }
        }
    }

    // MARK: URLSessionTaskDelegate

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void)
    {
        guard policy.followRedirects else {
            completionHandler(nil)
            return
        }
        let count = state.withLock { state -> Int in
            state.outcome.redirects += 1
            return state.outcome.redirects
        }
        if let limit = policy.maxRedirects, count > limit {
            stop(with: ToolFailure(.httpTooManyRedirects, "maximum (\(limit)) redirects followed", url: request.url))
            completionHandler(nil)
            return
        }
        completionHandler(request)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void)
    {
        let (disposition, credential) = policy.answer(challenge)
        completionHandler(disposition, credential)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
                    totalBytesSent: Int64, totalBytesExpectedToSend: Int64)
    {
        state.withLock { $0.outcome.bytesSent = totalBytesSent }
        progress?.sent(totalBytesSent, of: totalBytesExpectedToSend)
    }

    // MARK: URLSessionDataDelegate

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let proceed = state.withLock { state -> Bool in
            state.outcome.response = response
            return !state.stopped
        }
        guard proceed else {
            completionHandler(.cancel)
            return
        }
        switch check(response) {
        case .proceed:
            progress?.expect(response.expectedContentLength)
            let download = !(dataTask is URLSessionUploadTask) && (sink as? any DownloadFileSink)?.takesDownloadFile == true
            completionHandler(download ? .becomeDownload : .allow)
        case .skipBody:
            state.withLock { $0.skipped = true }
            completionHandler(.cancel)
        case .fail(let failure):
            stop(with: failure)
            completionHandler(.cancel)
        case .retry(let after):
            let status = (response as? HTTPURLResponse).map { " (HTTP \($0.statusCode))" } ?? ""
            state.withLock { $0.outcome.retryAfter = .some(after) }
            stop(with: ToolFailure(.badServerResponse, "the server asked to try again" + status, url: response.url))
            completionHandler(.cancel)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard !state.withLock({ $0.stopped || $0.finished || $0.skipped }) else { return }
        do {
            try sink.write(data)
            state.withLock { $0.outcome.bytes += Int64(data.count) }
            progress?.received(Int64(data.count))
        } catch {
            stop(with: ToolFailure(wrapping: error))
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didBecome downloadTask: URLSessionDownloadTask) {
        let stopped = state.withLock { state -> Bool in
            if !state.finished { state.task = downloadTask }
            return state.stopped
        }
        if stopped { downloadTask.cancel() }
    }

    // MARK: URLSessionDownloadDelegate

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64)
    {
        state.withLock { $0.outcome.bytes = totalBytesWritten }
        progress?.received(bytesWritten)
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        guard !state.withLock({ $0.stopped || $0.finished }), let sink = sink as? any DownloadFileSink else { return }
        var info = stat()
        let size = stat(location.path, &info) == 0 ? Int64(info.st_size) : nil
        do {
            try sink.adopt(downloadFile: location)
            if let size { state.withLock { $0.outcome.bytes = size } }
        } catch {
            stop(with: ToolFailure(wrapping: error))
        }
    }

    // MARK: Completion

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if state.withLock({ $0.outcome.response == nil }), let response = task.response {
            state.withLock { $0.outcome.response = response }
        }
        finish(error: error)
    }

    /// Delivers the outcome once; later calls do nothing.
    private func finish(error: (any Error)?) {
        let delivery = state.withLock { state -> (CheckedContinuation<FetchOutcome, Never>, FetchOutcome)? in
            guard !state.finished, let continuation = state.continuation else { return nil }
            state.finished = true
            state.continuation = nil
            state.task = nil
            // A skipped body ends in the cancellation that skipped it: that is the success.
            if state.outcome.failure == nil, let error, !state.skipped {
                state.outcome.failure = ToolFailure(wrapping: error)
            }
            return (continuation, state.outcome)
        }
        if let (continuation, outcome) = delivery {
            progress?.end()
            continuation.resume(returning: outcome)
        }
    }
}
