import Foundation

/// An upload task (from a file) of a background session: the agent carries it out; see
/// ``BackgroundDownloadTask``.
final class BackgroundUploadTask: URLSessionUploadTask, @unchecked Sendable {
    /// The task's agent side.
    let background: BackgroundTaskLink
    /// The body file as the app named it.
    let bodyFile: URL?

    init(session: URLSession, context: TaskSessionContext, identifier: Int, request: URLRequest?, bodyFile: URL?,
         background: BackgroundTaskLink) {
        self.background = background
        self.bodyFile = bodyFile
        super.init(session: session, context: context, identifier: identifier, request: request, completion: .delegate,
                   uploadBody: bodyFile.map(UploadBody.file) ?? .none)
    }

    /// Hands the task to the agent (first call) or resumes it there.
    override func resume() { background.session.resume(self, background) }
    /// Suspends the task in the agent.
    override func suspend() { background.session.suspend(self, background) }
    /// Cancels the task in the agent; its completion follows with `URLError.cancelled`.
    override func cancel() { background.session.cancel(self, background) }
    /// The agent's view of the task.
    override var state: URLSessionTask.State { background.taskState }
    /// Bytes received, as the agent last reported.
    override var countOfBytesReceived: Int64 { background.counts.received }
    /// Bytes expected, as the agent last reported.
    override var countOfBytesExpectedToReceive: Int64 { background.counts.expectedToReceive }
    /// Bytes sent, as the agent last reported.
    override var countOfBytesSent: Int64 { background.counts.sent }
    /// Bytes to send, as the agent last reported.
    override var countOfBytesExpectedToSend: Int64 { background.counts.expectedToSend }
    /// The response the agent reported with the completion.
    override var response: URLResponse? { background.response }
    /// The error the task completed with.
    override var error: (any Error)? { background.error }
}
