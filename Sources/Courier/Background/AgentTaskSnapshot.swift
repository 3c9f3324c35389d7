import Foundation

/// The kinds of task a background session hands to the agent (Apple's: downloads, and uploads
/// from a file).
package enum AgentTaskKind: String, Codable, Sendable, Equatable {
    /// `downloadTask(with:)`.
    case download
    /// `uploadTask(with:fromFile:)`.
    case upload
}

/// Where a task is in the agent, as clients see it (`Documentation/Background.md`, "Task lifecycle").
package enum AgentTaskPhase: String, Codable, Sendable, Equatable {
    /// Stored and waiting for a transfer slot or its begin date.
    case waiting
    /// Transferring.
    case running
    /// Suspended by the app.
    case suspended
    /// Finished, failed or cancelled; its completion event may still be undelivered.
    case completed

    /// The `URLSessionTask.State` a client shows.
    package var taskState: URLSessionTask.State {
        switch self {
        case .waiting, .running: return .running
        case .suspended: return .suspended
        case .completed: return .completed
        }
    }
}

/// What a client asks the agent to run: sent with `enqueue`.
package struct AgentTaskSpec: Codable, Sendable, Equatable {
    /// The task's identifier within its session identifier.
    package var taskID: Int
    /// Download or upload.
    package var kind: AgentTaskKind
    /// The request without credentials (stored).
    package var request: AgentRequestRecord
    /// The request's credentials (header fields, the URL with its password): kept in the agent's
    /// memory only, never in the database.
    package var secrets: AgentRequestSecrets?
    /// An upload's body file, as the app named it.
    package var uploadFile: String?
    /// When the task may start at the earliest.
    package var earliestBeginDate: Date?
    /// The app's description of the task.
    package var taskDescription: String?
    /// `downloadTask(withResumeData:)`: the resume data the download continues from (it names a
    /// partial file in the agent's `downloads/`, as the resume data of a failed background download
    /// does; other partial files cannot be opened and the download starts over).
    package var resumeData: Data?
    /// `countOfBytesClientExpectsToReceive` and `…ToSend`, when the app set them (absent in the
    /// messages of older clients): the agent checks a download's free space against the first and
    /// starts a discretionary identifier's smaller tasks first.
    package var clientExpectsToReceive: Int64?
    package var clientExpectsToSend: Int64?

    /// A task specification.
    package init(taskID: Int, kind: AgentTaskKind, request: AgentRequestRecord, secrets: AgentRequestSecrets?,
                 uploadFile: String?, earliestBeginDate: Date?, taskDescription: String?, resumeData: Data? = nil,
                 clientExpectsToReceive: Int64? = nil, clientExpectsToSend: Int64? = nil) {
        self.taskID = taskID
        self.kind = kind
        self.request = request
        self.secrets = secrets
        self.uploadFile = uploadFile
        self.earliestBeginDate = earliestBeginDate
        self.taskDescription = taskDescription
        self.resumeData = resumeData
        self.clientExpectsToReceive = clientExpectsToReceive
        self.clientExpectsToSend = clientExpectsToSend
    }
}

/// A task as the agent reports it.
package struct AgentTaskSnapshot: Codable, Sendable, Equatable {
    /// The session identifier the task belongs to.
    package var session: String
    /// The task's identifier within it.
    package var taskID: Int
    /// Download or upload.
    package var kind: AgentTaskKind
    /// The request (without credentials).
    package var request: AgentRequestRecord
    /// Where the task is.
    package var phase: AgentTaskPhase
    /// Its byte counters.
    package var counts: AgentByteCounts
    /// The last response, once there is one.
    package var response: AgentResponseRecord?
    /// The app's description of the task.
    package var taskDescription: String?
    /// An upload's body file.
    package var uploadFile: String?

    /// A snapshot.
    package init(session: String, taskID: Int, kind: AgentTaskKind, request: AgentRequestRecord, phase: AgentTaskPhase,
                 counts: AgentByteCounts, response: AgentResponseRecord?, taskDescription: String?, uploadFile: String?) {
        self.session = session
        self.taskID = taskID
        self.kind = kind
        self.request = request
        self.phase = phase
        self.counts = counts
        self.response = response
        self.taskDescription = taskDescription
        self.uploadFile = uploadFile
    }
}

/// What a client tells the agent about the session's configuration in `hello`: the settings the
/// agent's transfers honour.
package struct AgentSessionSettings: Codable, Sendable, Equatable {
    /// `timeoutIntervalForRequest`.
    package var requestTimeout: Double = 60
    /// `timeoutIntervalForResource` (seven days by default, as Apple's).
    package var resourceTimeout: Double = 604_800
    /// `httpMaximumConnectionsPerHost`.
    package var maximumConnectionsPerHost: Int = 6
    /// `isDiscretionary`.
    package var isDiscretionary: Bool = false
    /// `httpAdditionalHeaders`, as strings.
    package var additionalHeaders: [String: String] = [:]

    /// The defaults.
    package init() {}

    /// The settings of `configuration`.
    init(_ configuration: URLSessionConfiguration) {
        requestTimeout = configuration.timeoutIntervalForRequest
        resourceTimeout = configuration.timeoutIntervalForResource
        maximumConnectionsPerHost = configuration.httpMaximumConnectionsPerHost
        isDiscretionary = configuration.isDiscretionary
        var headers: [String: String] = [:]
        for (key, value) in configuration.httpAdditionalHeaders ?? [:] {
            if let name = key as? String, let text = value as? String { headers[name] = text }
        }
        additionalHeaders = headers
    }
}
