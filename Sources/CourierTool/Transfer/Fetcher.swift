import Foundation
import Courier

/// Runs one request as a task of the run's shared `URLSession`, with a ``StreamingDelegate`` as the
/// task's own delegate, streaming the body into a sink chunk by chunk.
struct Fetcher: Sendable {
    /// The session every fetch of the run shares (connections, cookies, credentials).
    let session: URLSession
    /// The most time one load may take (`-m/--max-time`), or nil for the session's defaults.
    var maxTime: TimeInterval?
    /// How redirects and challenges are answered.
    var policy = TransferPolicy()
    /// The progress meter, when it is shown.
    var progress: ProgressMeter?

    /// Loads `request`, writing the body to `sink` as it arrives; `uploadFile` makes it an upload
    /// task streaming that file as the body.
    ///
    /// Returns when the load has ended, whatever the way: success, failure, `-m` running out
    /// (a `timedOut` failure) or the calling task being cancelled (a `cancelled` failure). The sink is
    /// neither finished nor aborted here: the caller decides from the outcome.
    func fetch(_ request: URLRequest, uploadFile: URL? = nil, into sink: any OutputSink,
               check: @escaping ResponseCheck = { _ in .proceed }) async -> FetchOutcome
    {
        var request = request
        if let maxTime { request.timeoutInterval = maxTime }
        let delegate = StreamingDelegate(sink: sink, check: check, policy: policy, progress: progress?.begin())
        let url = request.url
        let token = Interrupts.register(delegate)
        defer { Interrupts.unregister(token) }
        let task: URLSessionTask = if let uploadFile {
            session.uploadTask(with: request, fromFile: uploadFile)
        } else {
            session.dataTask(with: request)
        }

        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if let maxTime {
                    DispatchQueue.global().asyncAfter(deadline: .now() + maxTime) {
                        delegate.stop(with: ToolFailure(
                            .timedOut, "no complete response within \(Self.format(seconds: maxTime))", url: url))
                    }
                }
                delegate.start(task, continuation: continuation)
            }
        } onCancel: {
            delegate.stop(with: ToolFailure(.cancelled, "cancelled", url: url))
        }
    }

    /// The session for one run: ephemeral (cookies, credentials and connections live as long as the
    /// run, in memory; no cache), with `-m` as its timeouts; with `verbose`, its logger prints the
    /// wire trace (``VerboseTrace``), showing credentials when `traceSecrets`.
    static func makeSession(maxTime: TimeInterval?, cookies: [HTTPCookie] = [], verbose: Bool = false,
                            traceSecrets: Bool = false) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        if verbose {
            configuration.logger = VerboseTrace.logger()
            configuration.logsSecrets = traceSecrets
        }
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        if let maxTime {
            configuration.timeoutIntervalForRequest = maxTime
            configuration.timeoutIntervalForResource = maxTime
        }
        if let storage = configuration.httpCookieStorage {
            for cookie in cookies { storage.setCookie(cookie) }
        }
        return URLSession(configuration: configuration, delegate: nil, delegateQueue: nil)
    }

    /// `2 s`, `0.5 s`.
    static func format(seconds: TimeInterval) -> String {
        seconds == seconds.rounded() && abs(seconds) < 1e15 ? "\(Int64(seconds)) s" : "\(seconds) s"
    }
}
