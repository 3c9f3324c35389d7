import Courier
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The transfer agent's core: its tasks, its clients and its store, all in one lock.
///
/// Requests from clients (``handle(_:from:)``), the transfers' reports (`Agent+Transfers.swift`)
/// and the housekeeping tick each take the lock once: the task's ``AgentTaskLifecycle`` decides,
/// the store records it (so a reply is sent only after the change is on disk), and messages are
/// queued to the clients' write queues, in order. What involves Courier (making, resuming,
/// cancelling transfers) is returned as ``AgentEffects`` and done after the lock is released.
final class Agent: Sendable {
    let directories: BackgroundDirectories
    let options: AgentOptions
    let state: Locked<AgentState>
    /// The inner sessions' delegate.
    let transferDelegate = AgentTransferDelegate()
    /// The transfer sessions, one per identifier, made with its settings (a leaf lock: sessions
    /// are made outside it).
    let transferSessions = Locked<[String: (session: URLSession, settings: AgentSessionSettings)]>([:])

    /// The agent's state.
    struct AgentState {
        let store: AgentStore
        var tasks: [AgentTaskKey: AgentTaskEntry] = [:]
        var clients: [ObjectIdentifier: AgentClientInfo] = [:]
        /// The identifiers' settings (their latest `hello`), as loaded.
        var settings: [String: AgentSessionSettings] = [:]
        /// Running transfers: the inner task's identity → its task and generation.
        var transfers: [ObjectIdentifier: (key: AgentTaskKey, generation: Int)] = [:]
        /// When the agent last had a client or a running task.
        var lastBusy = Date()
        /// When expired partial files were last removed.
        var lastSweep = Date()
        /// Questions sent to apps, waiting for their answers.
        var questions: [Int64: AgentPendingQuestion] = [:]
        /// The last question's number.
        var lastQuestion: Int64 = 0
    }

    /// One task's entry.
    struct AgentTaskEntry {
        var row: AgentTaskRow
        var lifecycle: AgentTaskLifecycle
        var secrets: AgentRequestSecrets?
        var transfer: URLSessionTask?
        var finishedFile: String?
        var body = Data()
        var checkpointBytes: Int64 = 0
        var checkpointTime = Date()
        /// Not to start before this (a retry's delay, or the earliest begin date).
        var notBefore: Date?
        /// The app was asked `willBeginDelayedRequest` (or had no chance to be) for this task
        /// since the agent loaded it.
        var delayAsked = false
        /// The running transfer's expected length was checked against the free space.
        var spaceChecked = false
    }

    /// One client's entry.
    struct AgentClientInfo {
        let connection: AgentConnection
        var session: String?
        /// The backlog sent at `hello` is not all acknowledged yet.
        var backlog = false
        /// An event was delivered since the last `allDelivered`.
        var deliveredSinceMarker = false
    }

    /// Opens the store and loads its tasks; tasks that were running when the agent stopped wait to
    /// start again (from their checkpoint).
    init(directories: BackgroundDirectories, options: AgentOptions) throws {
        self.directories = directories
        self.options = options
        let store = try AgentStore(path: directories.databasePath)
        var state = AgentState(store: store)
        let rows = try store.allTasks()
        AgentPartialFiles.sweepAtStart(store, rows: rows, in: directories.downloads, now: Date())
        for row in rows {
            var entry = AgentTaskEntry(row: row, lifecycle: AgentTaskLifecycle(stored: row.phase))
            entry.row.phase = entry.lifecycle.storedPhase
            entry.checkpointBytes = row.counts.received
            entry.notBefore = row.earliestBeginDate
            if row.phase == .running { try store.setPhase(row.key, .waiting) }
            state.tasks[row.key] = entry
        }
        self.state = Locked(state)
        transferDelegate.agent = self
    }

    // MARK: Clients

    /// A client connected.
    func connected(_ connection: AgentConnection) {
        state.withLock { state in
            state.clients[ObjectIdentifier(connection)] = AgentClientInfo(connection: connection)
            state.lastBusy = Date()
        }
    }

    /// A client went away (its tasks go on; what it was asked is decided by default).
    func disconnected(_ connection: AgentConnection) {
        let client = ObjectIdentifier(connection)
        let effects = state.withLock { state in
            state.clients[client] = nil
            state.lastBusy = Date()
            return abandonQuestionsLocked(&state) { $0.client == client }
        }
        perform(effects)
    }

    /// Handles one request; the reply (and, for `hello`, the backlog) is queued to `connection`.
    func handle(_ message: AgentClientMessage, from connection: AgentConnection) {
        let id = message.requestID
        let effects: AgentEffects = state.withLock { state in
            let client = ObjectIdentifier(connection)
            var effects = AgentEffects()
            do {
                switch message.request {
                case .hello(let session, let settings):
                    try hello(&state, client, connection, id, session, settings)
                case .enqueue(let spec):
                    let session = try boundSession(state, client)
                    try enqueue(&state, session, spec)
                    if let row = state.tasks[AgentTaskKey(session: session, taskID: spec.taskID)]?.row {
                        connection.reply(id, .committed(row.snapshot))
                    }
                case .cancel(let taskID):
                    effects.merge(try cancel(&state, AgentTaskKey(session: try boundSession(state, client), taskID: taskID)))
                    connection.reply(id, .done)
                case .cancelProducingResumeData(let taskID):
                    let key = AgentTaskKey(session: try boundSession(state, client), taskID: taskID)
                    let error = AgentErrorRecord(code: .cancelled, message: "The task was cancelled.", url: state.tasks[key]?.row.request.url)
                    effects.merge(try endKeepingResumeDataLocked(&state, key, error))
                    connection.reply(id, .done)
                case .cancelTask(let session, let taskID):
                    effects.merge(try cancel(&state, AgentTaskKey(session: session, taskID: taskID)))
                    connection.reply(id, .done)
                case .suspend(let taskID):
                    effects.merge(try suspend(&state, AgentTaskKey(session: try boundSession(state, client), taskID: taskID)))
                    connection.reply(id, .done)
                case .resume(let taskID):
                    try resume(&state, AgentTaskKey(session: try boundSession(state, client), taskID: taskID))
                    connection.reply(id, .done)
                case .listTasks:
                    let session = try boundSession(state, client)
                    connection.reply(id, .tasks(state.tasks.values.filter { $0.row.key.session == session }
                        .sorted { $0.row.key < $1.row.key }.map(\.row.snapshot)))
                case .listAllTasks:
                    connection.reply(id, .tasks(state.tasks.values.sorted { $0.row.key < $1.row.key }.map(\.row.snapshot)))
                case .answer(let question, let answer):
                    effects.merge(answeredLocked(&state, client, question, answer))
                case .acknowledge(let sequence):
                    try acknowledge(&state, client, sequence)
                    connection.reply(id, .done)
                case .invalidate(let cancelTasks):
                    let session = try boundSession(state, client)
                    if cancelTasks {
                        for key in state.tasks.keys where key.session == session { effects.merge(try cancel(&state, key)) }
                    }
                    connection.reply(id, .done)
                case .status:
                    let running = state.tasks.values.filter { if case .running = $0.lifecycle.phase { return true } else { return false } }.count
                    let waiting = state.tasks.values.filter { $0.lifecycle.phase == .waiting || $0.lifecycle.phase == .suspended }.count
                    connection.reply(id, .status(AgentStatus(processID: getpid(), runningTasks: running, waitingTasks: waiting,
                                                              pendingEvents: (try? state.store.pendingEventCount()) ?? 0,
                                                              clients: state.clients.count, databasePath: state.store.path)))
                }
            } catch let refusal as AgentRefusal {
                connection.reply(id, .failure(code: refusal.code.rawValue, message: refusal.message))
            } catch {
                connection.reply(id, .failure(code: URLError.Code.cannotWriteToFile.rawValue,
                                              message: "The transfer agent could not store the change: \(error)"))
            }
            effects.merge(scheduleLocked(&state))
            return effects
        }
        perform(effects)
    }

    private func boundSession(_ state: AgentState, _ client: ObjectIdentifier) throws -> String {
        guard let session = state.clients[client]?.session else {
            throw AgentRefusal(code: .unknown, message: "say hello with a session identifier first")
        }
        return session
    }

    private func hello(_ state: inout AgentState, _ client: ObjectIdentifier, _ connection: AgentConnection, _ id: UInt64,
                       _ session: String, _ settings: AgentSessionSettings) throws {
        guard !session.isEmpty, session.utf8.count <= 256 else {
            throw AgentRefusal(code: .badURL, message: "a background session identifier is 1 to 256 bytes long")
        }
        if state.clients.contains(where: { $0.key != client && $0.value.session == session }) {
            throw AgentRefusal(code: .backgroundSessionInUseByAnotherProcess,
                               message: "another process is connected with the background session identifier “\(session)”")
        }
        try state.store.saveSession(session, settings: settings)
        state.settings[session] = settings
        let next = try state.store.lastTaskID(of: session) + 1
        let tasks = state.tasks.values.filter { $0.row.key.session == session }.sorted { $0.row.key < $1.row.key }.map(\.row.snapshot)
        connection.reply(id, .welcome(nextTaskID: next, tasks: tasks))
        let backlog = try state.store.pendingEvents(of: session)
        for stored in backlog {
            connection.event(AgentEvent(sequence: stored.sequence, taskID: stored.taskID, kind: .completed(stored.completion)))
        }
        state.clients[client]?.session = session
        state.clients[client]?.backlog = !backlog.isEmpty
    }

    private func enqueue(_ state: inout AgentState, _ session: String, _ spec: AgentTaskSpec) throws {
        let key = AgentTaskKey(session: session, taskID: spec.taskID)
        guard state.tasks[key] == nil, spec.taskID > 0 else {
            throw AgentRefusal(code: .unknown, message: "task \(spec.taskID) of “\(session)” exists already")
        }
        guard let url = URL(string: spec.request.url), url.scheme != nil else {
            throw AgentRefusal(code: .badURL, message: "the task's URL \(spec.request.url) is not valid")
        }
        var row = AgentTaskRow(key: key, kind: spec.kind, request: spec.request, phase: .waiting, uploadFile: nil,
                               earliestBeginDate: spec.earliestBeginDate, taskDescription: spec.taskDescription, created: Date(),
                               clientExpectsToReceive: spec.clientExpectsToReceive ?? -1, clientExpectsToSend: spec.clientExpectsToSend ?? -1)
        if spec.kind == .download, let resumeData = spec.resumeData {
            // `downloadTask(withResumeData:)`: continues from the partial file the resume data
            // names, which stops being a kept leftover.
            row.resumeData = resumeData
            if let partial = URLSessionDownloadTask.partialFilePath(ofResumeData: resumeData) {
                try state.store.releasePartial(AgentPartialFiles.name(of: partial))
            }
        }
        if spec.kind == .upload {
            row.uploadFile = try keepUploadBody(spec.uploadFile, key: key, url: url)
            row.counts.expectedToSend = (try? FileManager.default.attributesOfItem(atPath: row.uploadFile ?? "")[.size] as? NSNumber)?
                .map { $0.int64Value } ?? -1
        }
        try state.store.insert(row)
        var entry = AgentTaskEntry(row: row, lifecycle: AgentTaskLifecycle(stored: .waiting), secrets: spec.secrets)
        entry.notBefore = spec.earliestBeginDate
        state.tasks[key] = entry
    }

    /// Links (or copies) an upload's body into the agent's directory, so the upload goes on when
    /// the app removes its file.
    private func keepUploadBody(_ path: String?, key: AgentTaskKey, url: URL) throws -> String {
        guard let path, FileManager.default.isReadableFile(atPath: path) else {
            throw AgentRefusal(code: .fileDoesNotExist, message: "the upload body file \(path ?? "(none)") cannot be read")
        }
        _ = PrivateDirectory.prepare(directories.uploads, strict: true)
        let kept = directories.uploads.appendingPathComponent("\(AgentFileNames.safe(key.session))-\(key.taskID).body").path
        unlink(kept)
        if link(path, kept) != 0 {
            do {
                try FileManager.default.copyItem(atPath: path, toPath: kept)
            } catch {
                throw AgentRefusal(code: .cannotCreateFile, message: "the upload body cannot be kept: \(error.localizedDescription)")
            }
        }
        return kept
    }

    private func cancel(_ state: inout AgentState, _ key: AgentTaskKey) throws -> AgentEffects {
        try endLocked(&state, key, AgentErrorRecord(code: .cancelled, message: "The task was cancelled.",
                                                    url: state.tasks[key]?.row.request.url))
    }

    /// Ends a task that has not completed with `error` (cancelled, or past its resource timeout):
    /// its transfer is cancelled (Courier removes its partial file) or, when none runs, the partial
    /// file its resume data names is removed — or, `keepingResumeData`, kept for the app, which
    /// gets the resume data with the error. An upload's kept body goes too.
    func endLocked(_ state: inout AgentState, _ key: AgentTaskKey, _ error: AgentErrorRecord,
                   keepingResumeData: Bool = false) throws -> AgentEffects {
        guard var entry = state.tasks[key] else {
            throw AgentRefusal(code: .unknown, message: "no task \(key.taskID) of “\(key.session)”")
        }
        var effects = AgentEffects()
        guard case .complete = entry.lifecycle.cancel() else { return effects }
        var kept: Data?
        if let transfer = entry.transfer {
            state.transfers[ObjectIdentifier(transfer)] = nil
            entry.transfer = nil
            effects.cancels.append(transfer)
        } else if let data = entry.row.resumeData, let partial = URLSessionDownloadTask.partialFilePath(ofResumeData: data) {
            if keepingResumeData, (try? state.store.keepPartial(AgentPartialFiles.name(of: partial),
                                                               until: Date().addingTimeInterval(options.partialRetention))) != nil {
                kept = data
            } else {
                effects.removals.append(partial)
            }
        }
        if entry.row.kind == .upload, let body = entry.row.uploadFile { effects.removals.append(body) }
        state.tasks[key] = entry
        try completeLocked(&state, key, AgentCompletion(file: nil, error: error, response: entry.row.response,
                                                         counts: entry.row.counts, body: nil, resumeData: kept))
        return effects
    }

    /// Ends a task with `error`, handing the app the resume data of what it has: a running
    /// download's transfer is stopped producing it (the completion follows once it has), else the
    /// partial file its stored resume data names is kept (``endLocked(_:_:_:keepingResumeData:)``).
    /// For a resource timeout and `cancel(byProducingResumeData:)`.
    func endKeepingResumeDataLocked(_ state: inout AgentState, _ key: AgentTaskKey, _ error: AgentErrorRecord) throws -> AgentEffects {
        if var entry = state.tasks[key], let download = entry.transfer as? URLSessionDownloadTask,
           case .complete = entry.lifecycle.cancel() {
            state.transfers[ObjectIdentifier(download)] = nil
            entry.transfer = nil
            state.tasks[key] = entry
            var effects = AgentEffects()
            effects.endings.append((download, key, error))
            return effects
        }
        return try endLocked(&state, key, error, keepingResumeData: true)
    }

    private func suspend(_ state: inout AgentState, _ key: AgentTaskKey) throws -> AgentEffects {
        guard var entry = state.tasks[key] else { throw AgentRefusal(code: .unknown, message: "no task \(key.taskID)") }
        var effects = AgentEffects()
        switch entry.lifecycle.suspend() {
        case .none:
            return effects
        case .store:
            break
        case .stopTransfer:
            if let transfer = entry.transfer {
                state.transfers[ObjectIdentifier(transfer)] = nil
                entry.transfer = nil
                effects.suspends.append((transfer, key))
            }
        }
        entry.row.phase = .suspended
        state.tasks[key] = entry
        try state.store.setPhase(key, .suspended)
        return effects
    }

    private func resume(_ state: inout AgentState, _ key: AgentTaskKey) throws {
        guard var entry = state.tasks[key] else { throw AgentRefusal(code: .unknown, message: "no task \(key.taskID)") }
        guard entry.lifecycle.resume() else { return }
        entry.row.phase = .waiting
        state.tasks[key] = entry
        try state.store.setPhase(key, .waiting)
    }

    private func acknowledge(_ state: inout AgentState, _ client: ObjectIdentifier, _ sequence: Int64) throws {
        let session = try boundSession(state, client)
        if let taskID = try state.store.acknowledge(session, sequence: sequence) {
            let key = AgentTaskKey(session: session, taskID: taskID)
            if state.tasks[key]?.lifecycle.phase == .completed { state.tasks[key] = nil }
            state.clients[client]?.deliveredSinceMarker = true
        }
        guard let info = state.clients[client], info.deliveredSinceMarker,
              try state.store.pendingEventCount(of: session) == 0 else { return }
        let active = state.tasks.values.contains { $0.row.key.session == session && $0.lifecycle.phase != .completed && $0.lifecycle.phase != .suspended }
        guard info.backlog || !active else { return }
        state.clients[client]?.backlog = false
        state.clients[client]?.deliveredSinceMarker = false
        info.connection.event(AgentEvent(sequence: 0, taskID: 0, kind: .allDelivered))
    }

    /// Ends a task: stores the completion event and sends it to the session's client.
    func completeLocked(_ state: inout AgentState, _ key: AgentTaskKey, _ completion: AgentCompletion) throws {
        let sequence = try state.store.complete(key, completion)
        state.tasks[key]?.row.phase = .completed
        state.tasks[key]?.row.counts = completion.counts
        state.tasks[key]?.transfer = nil
        let event = AgentEvent(sequence: sequence, taskID: key.taskID, kind: .completed(completion))
        for client in state.clients.values where client.session == key.session {
            client.connection.event(event)
        }
    }

    /// Sends a transient event to the session's client, if one is connected.
    func sendLocked(_ state: AgentState, _ session: String, _ event: AgentEvent) {
        for client in state.clients.values where client.session == session {
            client.connection.event(event)
        }
    }
}

/// A request the agent refuses, with the `URLError` code the client reports.
struct AgentRefusal: Error {
    let code: URLError.Code
    let message: String
}

/// Names of the agent's files.
enum AgentFileNames {
    /// A file-name-safe form of `text`: its letters and digits (others replaced, cut to 40), and
    /// a hash of all of it, so that two identifiers never share a name.
    static func safe(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        let readable = String(text.unicodeScalars.prefix(40).map { scalar -> Character in
            scalar.isASCII && CharacterSet.alphanumerics.contains(scalar) ? Character(scalar) : "_"
        })
        return "\(readable)-\(String(hash, radix: 16))"
    }
}
