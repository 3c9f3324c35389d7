import Foundation
import Logging

/// The task's lifecycle in the session's log: created, resumed, suspended, cancelled and completed,
/// each a `debug` record with the task's identifier, kind and URL (without credentials), and for
/// completion its outcome, status code and byte count. At `info` and above each call is one level
/// check: no message or metadata is built.
extension URLSessionTask {
    /// A step of the task's life, as its log message says it.
    enum LifecycleEvent: String {
        case created = "task created"
        case resumed = "task resumed"
        case suspended = "task suspended"
        case cancelled = "task cancelled"
        case completed = "task completed"
    }

    /// Logs `event` at `debug` to the session's logger.
    func log(_ event: LifecycleEvent) {
        guard let logger = session?.environment.logger, CourierLogging.emits(.debug, logger) else { return }
        logger.debug("\(event.rawValue)", metadata: lifecycleMetadata(for: event))
    }

    /// The record's metadata: identity always, the outcome when the task completed.
    private func lifecycleMetadata(for event: LifecycleEvent) -> Logger.Metadata {
        let (request, error, response, received) = lock.withLock {
            (core.currentRequest ?? initialRequest, core.error, core.response, core.bytesReceived)
        }
        var metadata: Logger.Metadata = [
            CourierLogKey.task: "\(identifier)",
            CourierLogKey.kind: "\(kindName)",
            CourierLogKey.url: "\(LogRedaction.url(request?.url))",
        ]
        guard event == .completed else { return metadata }
        metadata[CourierLogKey.outcome] = "\(Self.outcomeName(of: error))"
        if let error, (error as? URLError)?.code != .cancelled {
            metadata[CourierLogKey.error] = "\(LogRedaction.userinfo(in: Self.errorSummary(error)))"
        }
        metadata[CourierLogKey.bytes] = "\(received)"
        if let http = response as? HTTPURLResponse {
            metadata[CourierLogKey.status] = "\(http.statusCode)"
        }
        return metadata
    }

    /// `data`, `upload` or `download`.
    private var kindName: String {
        if self is URLSessionDownloadTask { return "download" }
        return self is URLSessionUploadTask ? "upload" : "data"
    }

    /// `success`, `cancelled` or `failed`.
    static func outcomeName(of error: (any Error)?) -> String {
        guard let error else { return "success" }
        return (error as? URLError)?.code == .cancelled ? "cancelled" : "failed"
    }

    /// The error's `URLError` code number and description (`-1001 The request timed out.`).
    static func errorSummary(_ error: any Error) -> String {
        guard let urlError = error as? URLError else { return String(describing: error) }
        return "\(urlError.code.rawValue) \(urlError.localizedDescription)"
    }
}
