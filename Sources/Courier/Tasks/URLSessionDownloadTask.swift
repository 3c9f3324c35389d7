import Foundation

/// A task that writes the body to a temporary file, handed to the delegate's
/// `didFinishDownloadingTo` or to the completion handler, and removed when that returns.
open class URLSessionDownloadTask: URLSessionTask, @unchecked Sendable {
    /// Cancels the download and produces resume data for
    /// `URLSession.downloadTask(withResumeData:)`, or `nil` when the download cannot be resumed
    /// (nothing received yet, or a handler that cannot resume). The handler runs on the session's
    /// delegate queue, before the task's completion.
    open func cancel(byProducingResumeData completionHandler: @escaping (Data?) -> Void) {
        cancelTask(producingResumeData: UncheckedSendable(completionHandler))
    }
}
