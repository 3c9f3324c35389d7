import Foundation
import Testing
@testable import Courier
@testable import CourierAgentCore

/// The agent's SQLite store: schema, events and acknowledgements.
@Suite("Agent store")
struct AgentStoreTests {
    /// A new store in a directory of its own (the caller removes the directory).
    private static func makeStore() throws -> (AgentStore, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("agent-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return (try AgentStore(path: directory.appendingPathComponent("agent.sqlite").path), directory)
    }

    @Test("a completion is stored as an event until acknowledged, then the task is forgotten")
    func acknowledgementForgetsTask() throws {
        let (store, directory) = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = AgentTaskKey(session: "s", taskID: 1)
        let request = try #require(AgentRequestRecord.make(from: URLRequest(url: URL(string: "http://127.0.0.1/x")!))?.0)
        try store.insert(AgentTaskRow(key: key, kind: .download, request: request, phase: .waiting, created: Date()))
        let sequence = try store.complete(key, AgentCompletion(file: nil, error: nil, response: nil, counts: AgentByteCounts(), body: nil))
        let before = try store.pendingEvents(of: "s").map(\.sequence)
        let acknowledged = try store.acknowledge("s", sequence: sequence)
        let again = try store.acknowledge("s", sequence: sequence)
        let remaining = try store.allTasks()
        let lastTaskID = try store.lastTaskID(of: "s")
        let version = try store.schemaVersion()
        #expect(before == [sequence] && acknowledged == 1 && again == nil && remaining.isEmpty
                && lastTaskID == 1 && version == AgentSchema.currentVersion)
    }

    @Test("the app's byte-count hints are stored with the task (migration 3) and read back")
    func byteCountHintsAreStored() throws {
        let (store, directory) = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let request = try #require(AgentRequestRecord.make(from: URLRequest(url: URL(string: "http://127.0.0.1/x")!))?.0)
        try store.insert(AgentTaskRow(key: AgentTaskKey(session: "s", taskID: 1), kind: .download, request: request, phase: .waiting,
                                      created: Date(), clientExpectsToReceive: 5_000, clientExpectsToSend: 300))
        let row = try #require(try store.allTasks().first)
        #expect(row.clientExpectsToReceive == 5_000 && row.clientExpectsToSend == 300)
    }

    @Test("an enqueue message of a client that sends no byte-count hints still decodes, without hints")
    func specWithoutHintsDecodes() throws {
        let json = #"""
        {"taskID":3,"kind":"download","request":{"url":"http://127.0.0.1/x","method":"GET","headers":{},"timeoutInterval":60,"cachePolicy":0}}
        """#
        let spec = try JSONDecoder().decode(AgentTaskSpec.self, from: Data(json.utf8))
        #expect(spec.taskID == 3 && spec.clientExpectsToReceive == nil && spec.clientExpectsToSend == nil)
    }

    @Test("credentials are kept out of the stored request")
    func credentialsAreNotStored() throws {
        var request = URLRequest(url: URL(string: "https://user:secret@127.0.0.1/file")!)
        request.setValue("Bearer token", forHTTPHeaderField: "Authorization")
        request.setValue("yes", forHTTPHeaderField: "X-Kept")
        let (record, secrets) = try #require(AgentRequestRecord.make(from: request))
        let stored = String(decoding: try JSONEncoder().encode(record), as: UTF8.self)
        #expect(!stored.contains("secret") && !stored.contains("Bearer") && stored.contains("X-Kept")
                && record.urlRequest(secrets: secrets)?.value(forHTTPHeaderField: "Authorization") == "Bearer token")
    }
}
