import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import Courier

/// One test's transfer agent: its own state and runtime directories (so no test touches the user's
/// agent, and tests run in parallel), background configurations that use them, and the clean-up
/// that ends the agent the test started.
final class BackgroundSandbox: @unchecked Sendable {
    /// The sandbox's `COURIER_DATA_HOME`: the agent's directories are its `Background/`. Short, as a
    /// Unix socket's path must be.
    let root: URL
    /// The agent's directories.
    let directories: BackgroundDirectories
    /// What the agents of every sandbox get in their environment.
    static let agentEnvironment = ["COURIER_AGENT_IDLE_EXIT": "20", "COURIER_AGENT_CHECKPOINT_BYTES": "\(1 << 20)"]
    /// What this sandbox's agent gets: ``agentEnvironment`` and the test's own settings.
    let agentEnvironment: [String: String]

    /// A sandbox whose agent also gets `agentSettings` in its environment (such as
    /// `COURIER_AGENT_QUESTION_TIMEOUT`).
    init(agentSettings: [String: String] = [:]) throws {
        agentEnvironment = Self.agentEnvironment.merging(agentSettings) { $1 }
        var template = Array("/tmp/cbg-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw FaultServerError("mkdtemp failed")
        }
        root = URL(fileURLWithPath: String(cString: made), isDirectory: true)
        directories = BackgroundDirectories.resolve(environment: ["COURIER_DATA_HOME": root.path])
    }

    /// A background configuration with `identifier` whose sessions use this sandbox's agent.
    func configuration(_ identifier: String) -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.background(withIdentifier: identifier)
        configuration.backgroundAgentDirectories = directories
        configuration.backgroundAgentEnvironment = agentEnvironment
        return configuration
    }

    /// The environment for a child process (`courier --background`) that should use this sandbox.
    var childEnvironment: [String: String] {
        ProcessInfo.processInfo.environment.merging(agentEnvironment.merging(["COURIER_DATA_HOME": root.path]) { $1 }) { $1 }
    }

    /// The running agent's process, from its pid file.
    var agentPID: pid_t? {
        (try? String(contentsOf: directories.runtime.appendingPathComponent("agent.pid"), encoding: .utf8))
            .flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// Kills the agent with `signal` and waits (bounded) until it is gone; `true` when it was running.
    @discardableResult
    func killAgent(_ signal: Int32 = SIGKILL) -> Bool {
        guard let pid = agentPID, kill(pid, 0) == 0 else { return false }
        kill(pid, signal)
        let deadline = Date().addingTimeInterval(5)
        while kill(pid, 0) == 0, Date() < deadline { usleep(10_000) }
        return true
    }

    /// Ends the agent and removes the directories.
    func remove() {
        killAgent()
        try? FileManager.default.removeItem(at: root)
    }

    /// The finished downloads the agent keeps for delivery.
    var finishedFiles: [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directories.finished.path)) ?? []
    }

    /// Asks the running agent (without starting one) and returns its reply.
    func ask(_ request: AgentRequest) throws -> AgentReply {
        let socket = try AgentSocket.connect(path: directories.socketPath)
        defer { socket.close() }
        try socket.send(AgentClientMessage(requestID: 1, request: request))
        guard case .reply(_, let reply) = try socket.receive(AgentServerMessage.self).body else {
            throw FaultServerError("the agent sent no reply")
        }
        return reply
    }

    /// The agent's stored events not yet delivered, or `nil` when it does not answer.
    var pendingEvents: Int? {
        guard case .status(let status)? = try? ask(.status) else { return nil }
        return status.pendingEvents
    }

    /// Every identifier's tasks in the agent (empty when it does not answer).
    var agentTasks: [AgentTaskSnapshot] {
        guard case .tasks(let tasks)? = try? ask(.listAllTasks) else { return [] }
        return tasks
    }

    /// The agent's peak resident set size in bytes (`VmHWM` in `/proc/PID/status`).
    var agentPeakRSS: Int? {
        guard let pid = agentPID, let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return nil }
        return kilobytes * 1024
    }

    /// The end of the agent's log (`agent.log`: what its processes wrote), for a failing test's message.
    var agentLogTail: String {
        let log = (try? String(contentsOfFile: directories.logPath, encoding: .utf8)) ?? ""
        return log.isEmpty ? "(agent.log is empty)" : "agent.log: " + String(log.suffix(2000))
    }

    /// The files in the agent's partial-download directory.
    var partialFiles: [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directories.downloads.path)) ?? []
    }

    /// The `courier` executable beside the test bundle.
    static var courierBinary: String? {
        guard let running = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        let path = URL(fileURLWithPath: running).deletingLastPathComponent().appendingPathComponent("courier").path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }
}

/// A background session's delegate that records what it receives: each finished file's hash and
/// size (read inside `didFinishDownloadingTo`, as the file is gone after it), the completions, the
/// progress and the finish-events calls.
final class BackgroundRecorder: NSObject, URLSessionDownloadDelegate, @unchecked Sendable {
    struct State {
        /// Task → (hash, size) of its file.
        var files: [Int: (hash: UInt64, size: Int)] = [:]
        /// Task → its error (`nil`: success).
        var completions: [Int: URLError?] = [:]
        /// Task → how many times `didCompleteWithError` came for it.
        var completionCounts: [Int: Int] = [:]
        /// Task → how many times `didFinishDownloadingTo` came for it.
        var fileCounts: [Int: Int] = [:]
        /// The highest `totalBytesWritten` reported.
        var written: Int64 = 0
        var finishEvents = 0
        /// When the first file arrived.
        var firstFileAt: Date?
    }
    let state = Locked(State())

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        var hash = StreamHash()
        var size = 0
        if let handle = try? FileHandle(forReadingFrom: location) {
            while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                hash.update(chunk)
                size += chunk.count
            }
            try? handle.close()
        }
        state.withLock {
            $0.files[downloadTask.taskIdentifier] = (hash.finalValue, size)
            $0.fileCounts[downloadTask.taskIdentifier, default: 0] += 1
            if $0.firstFileAt == nil { $0.firstFileAt = Date() }
        }
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        state.withLock { $0.written = max($0.written, totalBytesWritten) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        state.withLock {
            $0.completions[task.taskIdentifier] = error as? URLError
            $0.completionCounts[task.taskIdentifier, default: 0] += 1
        }
    }

    func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {
        state.withLock { $0.finishEvents += 1 }
    }
}
