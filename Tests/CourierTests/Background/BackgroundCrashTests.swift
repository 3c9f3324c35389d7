import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import Courier

/// Processes killed mid-transfer: the agent, and a client (a `courier agent collect` child). Every
/// event reaches an app exactly once: none is lost, and none comes again on a later reconnection.
@Suite("Background crashes", .serialized)
struct BackgroundCrashTests {
    private static let longWait = 90 * testTimeScale

    @Test("the agent SIGKILLed mid-transfer: each event is delivered once, and a second reconnection gets none again")
    func agentKilledDeliversEachEventOnce() async throws {
        let nginx = try await NginxServer.shared()
        let sandbox = try BackgroundSandbox()
        defer { sandbox.remove() }
        let recorder = BackgroundRecorder()
        let session = URLSession(configuration: sandbox.configuration("crash-agent"), delegate: recorder, delegateQueue: nil)
        let quick = session.downloadTask(with: nginx.url(NginxServer.Files.hello))
        quick.resume()
        let slow = session.downloadTask(with: nginx.url("/slow/big.bin?bg=\(UUID().uuidString)"))
        slow.resume()
        // The quick task's event is delivered and acknowledged before the kill; the slow one is
        // past a few checkpoints.
        let ready = await waitUntil(timeout: Self.longWait) {
            recorder.state.current.completions[quick.taskIdentifier] != nil && sandbox.pendingEvents == 0
                && recorder.state.current.written >= 6 << 20
        }
        try #require(ready && sandbox.killAgent(SIGKILL), "the downloads did not get going")
        // Done once the slow task's completion was delivered and acknowledged (the acknowledgement
        // follows the delegate's return, so the completion alone can come a moment before it).
        let done = await waitUntil(timeout: Self.longWait) {
            recorder.state.current.completions[slow.taskIdentifier] != nil && sandbox.pendingEvents == 0
        }
        session.finishTasksAndInvalidate()

        let second = BackgroundRecorder()
        let again = URLSession(configuration: sandbox.configuration("crash-agent"), delegate: second, delegateQueue: nil)
        defer { again.invalidateAndCancel() }
        let leftOver = await again.allTasks
        let state = recorder.state.current
        #expect(done)
        #expect(state.completionCounts == [quick.taskIdentifier: 1, slow.taskIdentifier: 1])
        #expect(state.fileCounts == [quick.taskIdentifier: 1, slow.taskIdentifier: 1])
        #expect(state.files[slow.taskIdentifier]?.hash == nginx.bigHash)
        #expect(leftOver.isEmpty, "\(leftOver.map(\.taskIdentifier))")
        #expect(sandbox.pendingEvents == 0)
        #expect(second.state.current.completionCounts.isEmpty)
    }

    @Test("a client SIGKILLed mid-transfer: the next session gets the rest within 1 s, each event once, none again later")
    func clientKilledDeliversEachEventOnce() async throws {
        let nginx = try await NginxServer.shared()
        let courier = try #require(BackgroundSandbox.courierBinary, "courier is not built beside the tests")
        let sandbox = try BackgroundSandbox()
        defer { sandbox.remove() }
        let collected = sandbox.root.appendingPathComponent("collected", isDirectory: true)
        try FileManager.default.createDirectory(at: collected, withIntermediateDirectories: true)
        let queued = try TestChildProcess.run(courier, ["--background", "crash-client", nginx.url(NginxServer.Files.hello).absoluteString,
                                                        nginx.url("/slow/big.bin?bg=\(UUID().uuidString)").absoluteString],
                                              environment: sandbox.childEnvironment)
        try #require(queued.status == 0, "courier --background failed: \(queued.output)")
        // The child collects task 1 (delivered and acknowledged), then dies while task 2 runs.
        let childLog = sandbox.root.appendingPathComponent("collect.log")
        let child = try TestChildProcess(courier, ["agent", "collect", "crash-client", collected.path], environment: sandbox.childEnvironment,
                                         output: childLog)
        defer { child.stop(grace: 1) }
        let midway = await waitUntil(timeout: Self.longWait) {
            FileManager.default.fileExists(atPath: collected.appendingPathComponent("1-hello.txt").path) && sandbox.pendingEvents == 0
                && sandbox.agentTasks.contains { $0.taskID == 2 && $0.counts.received >= 6 << 20 }
        }
        try #require(midway && child.isRunning, """
            the collecting child did not get task 1 while task 2 ran (running: \(child.isRunning), exit status: \(String(describing: child.exitStatus)); \
            its output: \((try? String(contentsOf: childLog, encoding: .utf8)) ?? ""); \(sandbox.agentTasks.map { "task \($0.taskID) \($0.phase.rawValue) \($0.counts.received)" }); \
            \(sandbox.agentLogTail))
            """)
        kill(child.pid, SIGKILL)
        child.wait(seconds: 5)
        let finished = await waitUntil(timeout: Self.longWait) { !sandbox.finishedFiles.isEmpty }
        try #require(finished, "the agent did not finish task 2 without a client")

        let recorder = BackgroundRecorder()
        let created = Date()
        let session = URLSession(configuration: sandbox.configuration("crash-client"), delegate: recorder, delegateQueue: nil)
        let delivered = await waitUntil { recorder.state.current.finishEvents > 0 }
        session.finishTasksAndInvalidate()
        let delay = recorder.state.current.firstFileAt.map { $0.timeIntervalSince(created) } ?? .infinity

        let second = BackgroundRecorder()
        let again = URLSession(configuration: sandbox.configuration("crash-client"), delegate: second, delegateQueue: nil)
        defer { again.invalidateAndCancel() }
        let leftOver = await again.allTasks
        let state = recorder.state.current
        #expect(delivered && delay < 1 * testTimeScale && state.completionCounts == [2: 1] && state.fileCounts == [2: 1]
                && state.files[2]?.hash == nginx.bigHash && leftOver.isEmpty && sandbox.pendingEvents == 0
                && second.state.current.completionCounts.isEmpty, "delay \(delay) s")
    }
}
