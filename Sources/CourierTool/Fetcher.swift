import Foundation
import Courier

/// Runs one request through its own `URLSession` and a ``StreamingDelegate``, streaming the body into
/// a sink chunk by chunk.
struct Fetcher: Sendable {
    /// The most time one load may take (`-m/--max-time`), or nil for the session's defaults.
    var maxTime: TimeInterval?

    /// Loads `request`, writing the body to `sink` as it arrives.
    ///
    /// Returns when the load has ended, whatever the way: success, failure, `-m` running out
    /// (a `timedOut` failure) or the calling task being cancelled (a `cancelled` failure). The sink is
    /// neither finished nor aborted here: the caller decides from the outcome.
    func fetch(_ request: URLRequest, into sink: any OutputSink, check: @escaping ResponseCheck = { _ in nil }) async
        -> FetchOutcome
    {
        var request = request
        let configuration = URLSessionConfiguration.ephemeral
        if let maxTime {
            request.timeoutInterval = maxTime
            configuration.timeoutIntervalForRequest = maxTime
            configuration.timeoutIntervalForResource = maxTime
        }
        let delegate = StreamingDelegate(sink: sink, check: check)
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        let url = request.url
        let token = Interrupts.register(delegate)
        defer { Interrupts.unregister(token) }

        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if let maxTime {
                    DispatchQueue.global().asyncAfter(deadline: .now() + maxTime) {
                        delegate.stop(with: ToolFailure(
                            .timedOut, "no complete response within \(Self.format(seconds: maxTime))", url: url))
                    }
                }
                delegate.start(session.dataTask(with: request), continuation: continuation)
            }
        } onCancel: {
            delegate.stop(with: ToolFailure(.cancelled, "cancelled", url: url))
        }
        session.finishTasksAndInvalidate()
        return outcome
    }

    /// `2 s`, `0.5 s`.
    static func format(seconds: TimeInterval) -> String {
        seconds == seconds.rounded() && abs(seconds) < 1e15 ? "\(Int64(seconds)) s" : "\(seconds) s"
    }
}
