import Foundation
import Courier

/// What one load produced: the response (if one arrived), how many body bytes went to the sink, and
/// the failure (nil when the load succeeded).
struct FetchOutcome: Sendable {
    var response: URLResponse?
    var bytes: Int64 = 0
    var failure: ToolFailure?
}

/// Decides, when a response arrives and before its body flows, whether the load goes on
/// (`nil`) or stops with a failure. It may also write to the sink (the `-i` headers).
typealias ResponseCheck = @Sendable (URLResponse) -> ToolFailure?

/// The session delegate behind one fetch: streams each body chunk to a sink as it arrives and turns
/// the end of the task into one ``FetchOutcome``.
///
/// It also handles the two ways the tool stops a load itself, ``stop(with:)``: `-m` running out and
/// Ctrl-C. Both cancel the task and record why, and if the session never reports the end the outcome
/// is delivered anyway after a short grace period, so a fetch always ends.
final class StreamingDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private struct State {
        var continuation: CheckedContinuation<FetchOutcome, Never>?
        var task: URLSessionTask?
        var outcome = FetchOutcome()
        var stopped = false
        var finished = false
    }

    /// How long a stopped load may take to report its end before the outcome is delivered without it.
    static let stopGracePeriod: TimeInterval = 2

    private let sink: any OutputSink
    private let check: ResponseCheck
    private let state = Locked(State())

    init(sink: any OutputSink, check: @escaping ResponseCheck) {
        self.sink = sink
        self.check = check
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
        if let failure = check(response) {
            stop(with: failure)
            completionHandler(.cancel)
        } else {
            completionHandler(.allow)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard !state.withLock({ $0.stopped || $0.finished }) else { return }
        do {
            try sink.write(data)
            state.withLock { $0.outcome.bytes += Int64(data.count) }
        } catch {
            stop(with: ToolFailure(wrapping: error))
        }
    }

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
            if state.outcome.failure == nil, let error {
                state.outcome.failure = ToolFailure(wrapping: error)
            }
            return (continuation, state.outcome)
        }
        if let (continuation, outcome) = delivery {
            continuation.resume(returning: outcome)
        }
    }
}
