import Courier
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Identifies a task in the agent: its session identifier and its number there.
struct AgentTaskKey: Hashable, Sendable, Comparable {
    let session: String
    let taskID: Int

    static func < (lhs: AgentTaskKey, rhs: AgentTaskKey) -> Bool {
        (lhs.session, lhs.taskID) < (rhs.session, rhs.taskID)
    }
}

/// A task as stored.
struct AgentTaskRow: Sendable, Equatable {
    var key: AgentTaskKey
    var kind: AgentTaskKind
    var request: AgentRequestRecord
    var phase: AgentTaskPhase
    var uploadFile: String?
    var earliestBeginDate: Date?
    var taskDescription: String?
    var counts = AgentByteCounts()
    var resumeData: Data?
    var response: AgentResponseRecord?
    var created: Date
    /// The app's hints: `countOfBytesClientExpectsToReceive` and `…ToSend` (-1: none).
    var clientExpectsToReceive: Int64 = -1
    var clientExpectsToSend: Int64 = -1

    /// What clients see of it.
    var snapshot: AgentTaskSnapshot {
        AgentTaskSnapshot(session: key.session, taskID: key.taskID, kind: kind, request: request, phase: phase,
                          counts: counts, response: response, taskDescription: taskDescription, uploadFile: uploadFile)
    }
}

/// A stored event waiting for its client.
struct AgentStoredEvent: Sendable, Equatable {
    var sequence: Int64
    var taskID: Int
    var completion: AgentCompletion
}

/// The agent's durable state in SQLite (WAL mode, `synchronous=FULL`: a commit is on disk when it
/// returns). The file and its `-wal`/`-shm` companions are 0600 (the agent runs with umask 077 and
/// tightens them). Used only under the agent's lock.
final class AgentStore {
    private let database: SQLiteDatabase
    private let encoder = JSONEncoder()
    private let decoder = JSONDecoder()

    /// Opens the database at `path`, creating or migrating it.
    init(path: String) throws {
        database = try SQLiteDatabase(path: path)
        try database.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;")
        try migrate()
        for suffix in ["", "-wal", "-shm"] { chmod(path + suffix, 0o600) }
    }

    /// The file.
    var path: String { database.path }

    private func migrate() throws {
        try database.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        let rows = try database.query("SELECT version FROM schema_version")
        var version = Int(rows.first?.first?.integer ?? 0)
        if rows.isEmpty { try database.query("INSERT INTO schema_version (version) VALUES (0)") }
        guard version <= AgentSchema.currentVersion else {
            throw SQLiteError(code: 0, message: "\(path) has schema version \(version), newer than this agent's \(AgentSchema.currentVersion)")
        }
        while version < AgentSchema.currentVersion {
            let migration = AgentSchema.migrations[version]
            try database.transaction {
                try database.execute(migration)
                try database.query("UPDATE schema_version SET version = ?", [.integer(Int64(version + 1))])
            }
            version += 1
        }
    }

    /// The schema version of the file.
    func schemaVersion() throws -> Int {
        Int(try database.query("SELECT version FROM schema_version").first?.first?.integer ?? 0)
    }

    // MARK: Sessions

    /// The highest task identifier `session` ever used (0 for a new one).
    func lastTaskID(of session: String) throws -> Int {
        Int(try database.query("SELECT last_task_id FROM sessions WHERE identifier = ?", [.text(session)]).first?.first?.integer ?? 0)
    }

    /// Records `session`'s settings (the latest `hello`).
    func saveSession(_ session: String, settings: AgentSessionSettings) throws {
        let blob = try encoder.encode(settings)
        try database.query("""
            INSERT INTO sessions (identifier, settings) VALUES (?, ?)
            ON CONFLICT (identifier) DO UPDATE SET settings = excluded.settings
            """, [.text(session), .blob(blob)])
    }

    /// The settings `session` last said `hello` with.
    func settings(of session: String) throws -> AgentSessionSettings {
        guard let blob = try database.query("SELECT settings FROM sessions WHERE identifier = ?", [.text(session)]).first?.first?.blob,
              let settings = try? decoder.decode(AgentSessionSettings.self, from: blob) else { return AgentSessionSettings() }
        return settings
    }

    // MARK: Tasks

    /// Stores a new task and raises its session's last identifier.
    func insert(_ row: AgentTaskRow) throws {
        let request = try encoder.encode(row.request)
        try database.transaction {
            try database.query("""
                INSERT INTO tasks (session, task_id, kind, request, phase, upload_file, earliest_begin, description,
                                   bytes_expected_to_send, created, client_expects_receive, client_expects_send)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, [.text(row.key.session), .integer(Int64(row.key.taskID)), .text(row.kind.rawValue), .blob(request),
                      .text(row.phase.rawValue), row.uploadFile.map(SQLiteValue.text) ?? .null,
                      row.earliestBeginDate.map { .real($0.timeIntervalSince1970) } ?? .null,
                      row.taskDescription.map(SQLiteValue.text) ?? .null, .integer(row.counts.expectedToSend),
                      .real(row.created.timeIntervalSince1970), .integer(row.clientExpectsToReceive),
                      .integer(row.clientExpectsToSend)])
            if let resumeData = row.resumeData {
                try database.query("UPDATE tasks SET resume_data = ? WHERE session = ? AND task_id = ?",
                                   [.blob(resumeData), .text(row.key.session), .integer(Int64(row.key.taskID))])
            }
            try database.query("""
                INSERT INTO sessions (identifier, last_task_id) VALUES (?, ?)
                ON CONFLICT (identifier) DO UPDATE SET last_task_id = max(last_task_id, excluded.last_task_id)
                """, [.text(row.key.session), .integer(Int64(row.key.taskID))])
        }
    }

    /// Records where a task is.
    func setPhase(_ key: AgentTaskKey, _ phase: AgentTaskPhase) throws {
        try database.query("UPDATE tasks SET phase = ? WHERE session = ? AND task_id = ?",
                           [.text(phase.rawValue), .text(key.session), .integer(Int64(key.taskID))])
    }

    /// Records a running download's checkpoint: its resume data and counters.
    func saveCheckpoint(_ key: AgentTaskKey, resumeData: Data?, counts: AgentByteCounts) throws {
        try database.query("""
            UPDATE tasks SET resume_data = ?, bytes_received = ?, bytes_expected = ?, bytes_sent = ?, bytes_expected_to_send = ?
            WHERE session = ? AND task_id = ?
            """, [resumeData.map(SQLiteValue.blob) ?? .null, .integer(counts.received), .integer(counts.expectedToReceive),
                  .integer(counts.sent), .integer(counts.expectedToSend), .text(key.session), .integer(Int64(key.taskID))])
    }

    /// Ends a task: its phase becomes completed and its completion event is stored, in one
    /// transaction. Returns the event's sequence number.
    func complete(_ key: AgentTaskKey, _ completion: AgentCompletion) throws -> Int64 {
        let payload = try encoder.encode(completion)
        let response = try completion.response.map { try encoder.encode($0) }
        return try database.transaction {
            try database.query("""
                UPDATE tasks SET phase = ?, resume_data = NULL, response = ?, bytes_received = ?, bytes_expected = ?,
                                 bytes_sent = ?, bytes_expected_to_send = ?
                WHERE session = ? AND task_id = ?
                """, [.text(AgentTaskPhase.completed.rawValue), response.map(SQLiteValue.blob) ?? .null,
                      .integer(completion.counts.received), .integer(completion.counts.expectedToReceive),
                      .integer(completion.counts.sent), .integer(completion.counts.expectedToSend),
                      .text(key.session), .integer(Int64(key.taskID))])
            try database.query("INSERT INTO events (session, task_id, payload) VALUES (?, ?, ?)",
                               [.text(key.session), .integer(Int64(key.taskID)), .blob(payload)])
            return database.lastInsertedRowID
        }
    }

    /// Every stored task, in the order they were made.
    func allTasks() throws -> [AgentTaskRow] {
        let rows = try database.query("""
            SELECT session, task_id, kind, request, phase, upload_file, earliest_begin, description, bytes_received,
                   bytes_expected, bytes_sent, bytes_expected_to_send, resume_data, response, created,
                   client_expects_receive, client_expects_send
            FROM tasks ORDER BY created, session, task_id
            """)
        return rows.compactMap { row -> AgentTaskRow? in
            guard row.count == 17, let session = row[0].text, let kind = row[2].text.flatMap(AgentTaskKind.init(rawValue:)),
                  let requestBlob = row[3].blob, let request = try? decoder.decode(AgentRequestRecord.self, from: requestBlob),
                  let phase = row[4].text.flatMap(AgentTaskPhase.init(rawValue:)) else { return nil }
            var counts = AgentByteCounts()
            counts.received = row[8].integer
            counts.expectedToReceive = row[9].integer
            counts.sent = row[10].integer
            counts.expectedToSend = row[11].integer
            return AgentTaskRow(key: AgentTaskKey(session: session, taskID: Int(row[1].integer)), kind: kind, request: request,
                                phase: phase, uploadFile: row[5].text,
                                earliestBeginDate: row[6] == .null ? nil : Date(timeIntervalSince1970: row[6].real),
                                taskDescription: row[7].text, counts: counts, resumeData: row[12].blob,
                                response: row[13].blob.flatMap { try? decoder.decode(AgentResponseRecord.self, from: $0) },
                                created: Date(timeIntervalSince1970: row[14].real), clientExpectsToReceive: row[15].integer,
                                clientExpectsToSend: row[16].integer)
        }
    }

    // MARK: Kept partial files

    /// Keeps the partial download `name` (in `downloads/`) until `expiry`: a failed download's
    /// resume data names it.
    func keepPartial(_ name: String, until expiry: Date) throws {
        try database.query("INSERT OR REPLACE INTO kept_partials (name, expires) VALUES (?, ?)",
                           [.text(name), .real(expiry.timeIntervalSince1970)])
    }

    /// Stops keeping `name` (it was resumed, or it expired).
    func releasePartial(_ name: String) throws {
        try database.query("DELETE FROM kept_partials WHERE name = ?", [.text(name)])
    }

    /// The kept partial files and when each expires.
    func keptPartials() throws -> [String: Date] {
        var kept: [String: Date] = [:]
        for row in try database.query("SELECT name, expires FROM kept_partials") where row.count == 2 {
            if let name = row[0].text { kept[name] = Date(timeIntervalSince1970: row[1].real) }
        }
        return kept
    }

    // MARK: Events

    /// `session`'s undelivered events, oldest first.
    func pendingEvents(of session: String) throws -> [AgentStoredEvent] {
        try database.query("SELECT sequence, task_id, payload FROM events WHERE session = ? ORDER BY sequence", [.text(session)])
            .compactMap { row in
                guard row.count == 3, let payload = row[2].blob,
                      let completion = try? decoder.decode(AgentCompletion.self, from: payload) else { return nil }
                return AgentStoredEvent(sequence: row[0].integer, taskID: Int(row[1].integer), completion: completion)
            }
    }

    /// How many events wait, for `session` or for all.
    func pendingEventCount(of session: String? = nil) throws -> Int {
        let rows = try session.map { try database.query("SELECT count(*) FROM events WHERE session = ?", [.text($0)]) }
            ?? database.query("SELECT count(*) FROM events")
        return Int(rows.first?.first?.integer ?? 0)
    }

    /// The client delivered event `sequence` of `session`: it is forgotten, and so is its task
    /// (a task's only stored event is its completion). Returns the event's task, or `nil` when
    /// there was no such event (delivered before).
    func acknowledge(_ session: String, sequence: Int64) throws -> Int? {
        try database.transaction {
            guard let taskID = try database.query("SELECT task_id FROM events WHERE session = ? AND sequence = ?",
                                                  [.text(session), .integer(sequence)]).first?.first?.integer else { return nil }
            try database.query("DELETE FROM events WHERE sequence = ?", [.integer(sequence)])
            try database.query("DELETE FROM tasks WHERE session = ? AND task_id = ? AND phase = ?",
                               [.text(session), .integer(taskID), .text(AgentTaskPhase.completed.rawValue)])
            return Int(taskID)
        }
    }
}
