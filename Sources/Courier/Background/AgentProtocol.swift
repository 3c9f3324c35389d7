import Foundation

/// Constants of the socket protocol between background sessions and the transfer agent
/// (`Documentation/Background.md`, "Protocol").
///
/// Every message is a frame: a 4-byte big-endian length, then that many bytes of JSON
/// (``AgentClientMessage`` from a client, ``AgentServerMessage`` from the agent). Both carry
/// ``version``; a peer that reads another version, a frame over ``maximumMessageSize`` or JSON it
/// cannot decode closes that one connection.
package enum AgentProtocol {
    /// The protocol version this code speaks.
    package static let version = 1
    /// The largest frame either side accepts (1 MiB): requests and events are small; a larger
    /// length is a malformed or hostile peer.
    package static let maximumMessageSize = 1 << 20
    /// The socket's file name in the runtime directory.
    package static let socketName = "agent.sock"
}

/// One request from a client (a background session, or `courier agent`) to the agent.
package struct AgentClientMessage: Codable, Sendable, Equatable {
    /// ``AgentProtocol/version``.
    package var version: Int
    /// Chosen by the client; the agent's reply carries it back. Unique per connection.
    package var requestID: UInt64
    /// What the client asks.
    package var request: AgentRequest

    /// A request of the current protocol version.
    package init(requestID: UInt64, request: AgentRequest) {
        self.version = AgentProtocol.version
        self.requestID = requestID
        self.request = request
    }
}

/// What a client asks the agent. Task requests (`enqueue` … `invalidate`) need a `hello` first on
/// the same connection: they concern the session identifier it named.
package enum AgentRequest: Codable, Sendable, Equatable {
    /// Binds the connection to a background session identifier; answered with `welcome`, then the
    /// identifier's undelivered events follow in order.
    case hello(session: String, settings: AgentSessionSettings)
    /// Adds a task; answered with `committed` once it is in the database.
    case enqueue(AgentTaskSpec)
    /// Cancels a task; answered once the cancellation is in the database.
    case cancel(taskID: Int)
    /// Cancels a download keeping what it has (`cancel(byProducingResumeData:)`): its completion
    /// carries the resume data, and the partial file stays for the app, as a failed download's.
    case cancelProducingResumeData(taskID: Int)
    /// Suspends a task (its transfer stops, keeping what it has).
    case suspend(taskID: Int)
    /// Resumes a suspended task.
    case resume(taskID: Int)
    /// The session's tasks.
    case listTasks
    /// The client delivered the event with this sequence number: the agent forgets it.
    case acknowledge(sequence: Int64)
    /// The app invalidated its session; with `cancelTasks`, every task of the identifier is cancelled.
    case invalidate(cancelTasks: Bool)
    /// The agent's state, for `courier agent status`.
    case status
    /// Every identifier's tasks, for `courier agent tasks`.
    case listAllTasks
    /// Cancels one task of any identifier, for `courier agent cancel`.
    case cancelTask(session: String, taskID: Int)
    /// The app's delegate answered the agent's question `question` (sent without waiting for the
    /// reply).
    case answer(question: Int64, AgentAnswer)
}

/// One message from the agent: a reply to a request, or an event of the session's tasks.
package struct AgentServerMessage: Codable, Sendable, Equatable {
    /// ``AgentProtocol/version``.
    package var version: Int
    /// The message.
    package var body: Body

    /// A reply or an event.
    package enum Body: Codable, Sendable, Equatable {
        /// The answer to the request with `requestID`.
        case reply(requestID: UInt64, AgentReply)
        /// Something happened to a task.
        case event(AgentEvent)
    }

    /// A message of the current protocol version.
    package init(_ body: Body) {
        self.version = AgentProtocol.version
        self.body = body
    }
}

/// The agent's answer to one request.
package enum AgentReply: Codable, Sendable, Equatable {
    /// To `hello`: the identifier's tasks, and the identifier the next new task should get.
    case welcome(nextTaskID: Int, tasks: [AgentTaskSnapshot])
    /// To `enqueue`: the task as stored.
    case committed(AgentTaskSnapshot)
    /// The request was carried out (and stored).
    case done
    /// To `listTasks`, `listAllTasks`.
    case tasks([AgentTaskSnapshot])
    /// To `status`.
    case status(AgentStatus)
    /// The request was refused; `message` says why.
    case failure(code: Int, message: String)
}

/// The agent's state as `courier agent status` shows it.
package struct AgentStatus: Codable, Sendable, Equatable {
    /// The agent's process.
    package var processID: Int32
    /// Tasks transferring now.
    package var runningTasks: Int
    /// Tasks waiting (queued, suspended, or waiting for their begin date).
    package var waitingTasks: Int
    /// Events stored for clients that have not taken them yet.
    package var pendingEvents: Int
    /// Connected clients.
    package var clients: Int
    /// The database file.
    package var databasePath: String

    /// A status value.
    package init(processID: Int32, runningTasks: Int, waitingTasks: Int, pendingEvents: Int, clients: Int, databasePath: String) {
        self.processID = processID
        self.runningTasks = runningTasks
        self.waitingTasks = waitingTasks
        self.pendingEvents = pendingEvents
        self.clients = clients
        self.databasePath = databasePath
    }
}
