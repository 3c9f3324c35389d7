import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import Courier

/// Background sessions end to end: a real `courier-agent` (started by the session, in a per-test
/// sandbox), real downloads from the test nginx, and the delegate events that come back.
@Suite("Background sessions", .serialized)
struct BackgroundSessionTests {
    private static let longWait = 90 * testTimeScale

    @Test("a download reaches didFinishDownloadingTo, didCompleteWithError(nil) and the finish-events call")
    func downloadIsDelivered() async throws {
        let nginx = try await NginxServer.shared()
        let sandbox = try BackgroundSandbox()
        defer { sandbox.remove() }
        let recorder = BackgroundRecorder()
        let session = URLSession(configuration: sandbox.configuration("download"), delegate: recorder, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.downloadTask(with: nginx.url(NginxServer.Files.medium))
        task.resume()
        let delivered = await waitUntil { recorder.state.current.finishEvents > 0 }
        let expected = StreamHash.of(try nginx.contents(of: NginxServer.Files.medium))
        let state = recorder.state.current
        #expect(delivered && state.files[task.taskIdentifier]?.hash == expected
                && state.completions[task.taskIdentifier] == .some(nil) && task.state == .completed)
    }

    @Test("a process queues a download and exits; the next session with its identifier gets the file within 1 s")
    func eventsWaitForTheNextSession() async throws {
        let nginx = try await NginxServer.shared()
        let courier = try #require(BackgroundSandbox.courierBinary, "courier is not built beside the tests")
        let sandbox = try BackgroundSandbox()
        defer { sandbox.remove() }
        let url = nginx.url(NginxServer.Files.medium)
        let run = try TestChildProcess.run(courier, ["--background", "queued", url.absoluteString], environment: sandbox.childEnvironment)
        try #require(run.status == 0, "courier --background failed: \(run.output)")
        // The transfer finishes while no app is connected: its file waits in the agent's directory.
        let finished = await waitUntil { !sandbox.finishedFiles.isEmpty }
        try #require(finished, "the agent did not finish the download: \(sandbox.agentTasks.map { "task \($0.taskID) \($0.phase.rawValue) \($0.counts.received)" }); \(sandbox.agentLogTail)")

        let recorder = BackgroundRecorder()
        let created = Date()
        let session = URLSession(configuration: sandbox.configuration("queued"), delegate: recorder, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        await waitUntil { recorder.state.current.finishEvents > 0 }
        let state = recorder.state.current
        let expected = StreamHash.of(try nginx.contents(of: NginxServer.Files.medium))
        let delay = state.firstFileAt.map { $0.timeIntervalSince(created) } ?? .infinity
        #expect(state.files[1]?.hash == expected && state.completions[1] == .some(nil) && delay < 1 * testTimeScale)
    }

    @Test("the agent killed mid-transfer is restarted and resumes with a Range request: the file is byte-identical")
    func agentKilledMidTransferResumes() async throws {
        let nginx = try await NginxServer.shared()
        let sandbox = try BackgroundSandbox()
        defer { sandbox.remove() }
        let recorder = BackgroundRecorder()
        let session = URLSession(configuration: sandbox.configuration("killed"), delegate: recorder, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let marker = UUID().uuidString
        let task = session.downloadTask(with: nginx.url("/slow/big.bin?bg=\(marker)"))
        task.resume()
        // Past a few 1 MiB checkpoints (4 MiB/s), then SIGKILL: the session reconnects, starting a new agent.
        let progressed = await waitUntil { recorder.state.current.written >= 6 << 20 }
        try #require(progressed && sandbox.killAgent(SIGKILL), "the download did not progress")
        let done = await waitUntil(timeout: Self.longWait) { recorder.state.current.completions[task.taskIdentifier] != nil }
        let log = (try? String(contentsOf: nginx.prefix.appendingPathComponent("logs/access.log"), encoding: .utf8)) ?? ""
        let resumed = log.split(separator: "\n").contains { $0.contains("bg=\(marker)") && $0.contains("\" 206 ") }
        let state = recorder.state.current
        #expect(done && state.files[task.taskIdentifier]?.hash == nginx.bigHash && resumed)
    }

    @Test("two identifiers never see each other's tasks or events")
    func identifiersAreIsolated() async throws {
        let nginx = try await NginxServer.shared()
        let sandbox = try BackgroundSandbox()
        defer { sandbox.remove() }
        let alpha = BackgroundRecorder()
        let beta = BackgroundRecorder()
        let first = URLSession(configuration: sandbox.configuration("alpha"), delegate: alpha, delegateQueue: nil)
        let second = URLSession(configuration: sandbox.configuration("beta"), delegate: beta, delegateQueue: nil)
        defer { first.invalidateAndCancel(); second.invalidateAndCancel() }
        first.downloadTask(with: nginx.url(NginxServer.Files.hello)).resume()
        second.downloadTask(with: nginx.url(NginxServer.Files.json)).resume()
        await waitUntil { alpha.state.current.finishEvents > 0 && beta.state.current.finishEvents > 0 }
        let alphaFiles = alpha.state.current.files.mapValues(\.hash)
        let betaFiles = beta.state.current.files.mapValues(\.hash)
        #expect(alphaFiles == [1: StreamHash.of(NginxServer.Files.helloContents)]
                && betaFiles == [1: StreamHash.of(NginxServer.Files.jsonContents)])
    }

    @Test("a malformed message closes that client's connection only: another session keeps working")
    func malformedMessageFailsThatConnectionOnly() async throws {
        let nginx = try await NginxServer.shared()
        let sandbox = try BackgroundSandbox()
        defer { sandbox.remove() }
        let recorder = BackgroundRecorder()
        let session = URLSession(configuration: sandbox.configuration("survivor"), delegate: recorder, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let intruder = try AgentSocket.connect(path: sandbox.directories.socketPath)
        defer { intruder.close() }
        try intruder.sendRaw(Data([0, 0, 0, 5]) + Data("hello".utf8))
        let closed: Bool
        do {
            _ = try intruder.receive(AgentServerMessage.self)
            closed = false
        } catch {
            closed = error == .closed
        }
        let task = session.downloadTask(with: nginx.url(NginxServer.Files.hello))
        task.resume()
        await waitUntil { recorder.state.current.completions[task.taskIdentifier] != nil }
        #expect(closed && recorder.state.current.files[task.taskIdentifier]?.hash == StreamHash.of(NginxServer.Files.helloContents))
    }

    @Test("the agent's directories are 0700, its socket and database 0600")
    func permissions() async throws {
        let sandbox = try BackgroundSandbox()
        defer { sandbox.remove() }
        let session = URLSession(configuration: sandbox.configuration("modes"), delegate: BackgroundRecorder(), delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        func mode(_ path: String) -> mode_t? {
            var info = stat()
            return lstat(path, &info) == 0 ? info.st_mode & 0o777 : nil
        }
        let modes = [mode(sandbox.directories.state.path), mode(sandbox.directories.runtime.path),
                     mode(sandbox.directories.socketPath), mode(sandbox.directories.databasePath)]
        #expect(modes == [0o700, 0o700, 0o600, 0o600])
    }

    @Test("a completion-handler task in a background session fails with a clear error instead of trapping")
    func completionHandlersAreRefused() async throws {
        let sandbox = try BackgroundSandbox()
        defer { sandbox.remove() }
        let session = URLSession(configuration: sandbox.configuration("handlers"), delegate: BackgroundRecorder(), delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let result = Locked<URLError?>(nil)
        session.downloadTask(with: URL(string: "data:,x")!) { _, _, error in result.withLock { $0 = error as? URLError } }.resume()
        await waitUntil { result.current != nil }
        #expect(result.current?.code == .unsupportedURL
                && result.current?.localizedDescription.contains("Completion handlers are not supported in background sessions") == true)
    }

    @Test("a new session lists the agent's tasks for its identifier, and invalidateAndCancel cancels them there")
    func reconnectedSessionListsAndCancels() async throws {
        let nginx = try await NginxServer.shared()
        let courier = try #require(BackgroundSandbox.courierBinary, "courier is not built beside the tests")
        let sandbox = try BackgroundSandbox()
        defer { sandbox.remove() }
        let url = nginx.url("/slow/big.bin?bg=\(UUID().uuidString)")
        let run = try TestChildProcess.run(courier, ["--background", "listed", url.absoluteString], environment: sandbox.childEnvironment)
        try #require(run.status == 0, "courier --background failed: \(run.output)")
        let recorder = BackgroundRecorder()
        let session = URLSession(configuration: sandbox.configuration("listed"), delegate: recorder, delegateQueue: nil)
        let tasks = await session.allTasks
        let listed = tasks.map { "\($0.taskIdentifier) \($0.originalRequest?.url?.absoluteString ?? "") \($0.state.rawValue)" }
        session.invalidateAndCancel()
        await waitUntil { recorder.state.current.completions[1] != nil }
        #expect(listed == ["1 \(url.absoluteString) \(URLSessionTask.State.running.rawValue)"]
                && recorder.state.current.completions[1]??.code == .cancelled)
    }
}
