import Foundation

/// Something that happened to a background task, sent by the agent to the session.
///
/// Events with a `sequence` above 0 are stored until the client acknowledges them (each is
/// delivered exactly once, in sequence order); progress and the end-of-backlog marker are sent
/// only to a connected client (`sequence` 0).
package struct AgentEvent: Codable, Sendable, Equatable {
    /// The stored event's number (increasing), or 0 for an event that is not stored.
    package var sequence: Int64
    /// The task, within the connection's session identifier (0 for `allDelivered`).
    package var taskID: Int
    /// What happened.
    package var kind: Kind

    /// The kinds of events.
    package enum Kind: Codable, Sendable, Equatable {
        /// Body bytes reached the file (coalesced): `written` since the last report.
        case progress(written: Int64, total: Int64, expected: Int64)
        /// The task ended; a successful download carries its file.
        case completed(AgentCompletion)
        /// Every stored event of the identifier was delivered: the session calls
        /// `urlSessionDidFinishEvents(forBackgroundURLSession:)`.
        case allDelivered
        /// The agent asks the app's delegate (a redirect, a challenge); the client answers with
        /// ``AgentRequest/answer(question:_:)`` and the same `id`.
        case question(id: Int64, AgentQuestion)
    }

    /// An event.
    package init(sequence: Int64, taskID: Int, kind: Kind) {
        self.sequence = sequence
        self.taskID = taskID
        self.kind = kind
    }
}

/// How a task ended.
package struct AgentCompletion: Codable, Sendable, Equatable {
    /// The finished download, in the agent's directory, until the client moves it.
    package var file: String?
    /// Why the task failed; `nil` on success.
    package var error: AgentErrorRecord?
    /// The last response.
    package var response: AgentResponseRecord?
    /// The task's byte counts at the end.
    package var counts: AgentByteCounts
    /// An upload's response body (at most ``maximumBody`` bytes are kept).
    package var body: Data?
    /// A failed download's resume data (its partial file stays in the agent's `downloads/` for a
    /// while): the client puts it in the error's user info (`NSURLSessionDownloadTaskResumeData`).
    package var resumeData: Data?

    /// The most response body an upload task keeps for its client.
    package static let maximumBody = 256 * 1024

    /// A completion.
    package init(file: String?, error: AgentErrorRecord?, response: AgentResponseRecord?, counts: AgentByteCounts, body: Data?,
                 resumeData: Data? = nil) {
        self.file = file
        self.error = error
        self.response = response
        self.counts = counts
        self.body = body
        self.resumeData = resumeData
    }
}

/// A task's byte counters.
package struct AgentByteCounts: Codable, Sendable, Equatable {
    /// Body bytes received.
    package var received: Int64 = 0
    /// Body bytes expected, or -1 when unknown.
    package var expectedToReceive: Int64 = -1
    /// Body bytes sent.
    package var sent: Int64 = 0
    /// Body bytes to send, or -1 when unknown.
    package var expectedToSend: Int64 = -1

    /// Counters at their start.
    package init() {}
}
