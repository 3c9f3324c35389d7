import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import Courier

/// A background session's connection to the agent while it is being remade: one attempt at a
/// time, which later callers join, and none once the session is invalidated (Concurrency.md §3.3 (8)).
@Suite("Background reconnection", .serialized)
struct BackgroundReconnectionTests {
    private static let longWait = 60 * testTimeScale

    /// Kills the agent and waits (bounded) until `session`'s link has noticed: its reconnection is
    /// then pending. Returns the link.
    private static func loseConnection(_ session: URLSession, _ sandbox: BackgroundSandbox) async throws -> BackgroundSessionLink {
        let link = try #require(session.background)
        try #require(await waitUntil { link.state.withLock { $0.client != nil } }, "the session did not connect")
        try #require(sandbox.killAgent(SIGKILL), "no agent ran")
        try #require(await waitUntil { link.state.withLock { $0.client == nil } }, "the session did not notice the agent's end")
        return link
    }

    @Test("tasks resumed at once from several threads while the session has no connection all succeed")
    func concurrentResumesJoinOneConnectionAttempt() async throws {
        let nginx = try await NginxServer.shared()
        let sandbox = try BackgroundSandbox()
        defer { sandbox.remove() }
        let recorder = BackgroundRecorder()
        let session = URLSession(configuration: sandbox.configuration("joined"), delegate: recorder, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let tasks = (0..<24).map { session.downloadTask(with: nginx.url("\(NginxServer.Files.hello)?n=\($0)")) }
        _ = try await Self.loseConnection(session, sandbox)
        // Every thread needs the agent at once, racing the link's own reconnection timer.
        let resumed = UncheckedSendable(tasks)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                DispatchQueue.concurrentPerform(iterations: resumed.value.count) { resumed.value[$0].resume() }
                done.resume()
            }
        }
        let identifiers = Set(tasks.map(\.taskIdentifier))
        let allCompleted = await waitUntil(timeout: Self.longWait) {
            identifiers.isSubset(of: recorder.state.current.completions.keys)
        }
        let failed = recorder.state.current.completions.filter { $0.value != nil }
        #expect(allCompleted && failed.isEmpty, "\(failed.count) failed: \(failed.values.compactMap { $0?.localizedDescription })")
    }

    @Test("a session invalidated while its reconnection is pending gives its identifier up: a new session with it works")
    func invalidationDuringPendingReconnectionFreesTheIdentifier() async throws {
        let nginx = try await NginxServer.shared()
        let sandbox = try BackgroundSandbox()
        defer { sandbox.remove() }
        let first = URLSession(configuration: sandbox.configuration("again"), delegate: BackgroundRecorder(), delegateQueue: nil)
        let link = try await Self.loseConnection(first, sandbox)
        first.invalidateAndCancel()
        try #require(await waitUntil { link.state.withLock { $0.connection.isClosed } }, "the link was not closed")
        // Past the pending reconnection's moment (0.2 s after the loss) and an agent's start.
        await settle(2)
        let recorder = BackgroundRecorder()
        let second = URLSession(configuration: sandbox.configuration("again"), delegate: recorder, delegateQueue: nil)
        defer { second.invalidateAndCancel() }
        let task = second.downloadTask(with: nginx.url(NginxServer.Files.hello))
        task.resume()
        let completed = await waitUntil(timeout: Self.longWait) { recorder.state.current.completions[task.taskIdentifier] != nil }
        let error = recorder.state.current.completions[task.taskIdentifier] ?? nil
        #expect(completed && error == nil, "\(error?.localizedDescription ?? "no completion")")
    }
}
