import Courier
import Foundation

/// `courier agent collect ID DIR`: connects as the background session `ID` (the one
/// `courier --background ID URL…` queued downloads for), moves each finished download into `DIR`
/// as `<task>-<name>`, prints one line per task (`collected TASK PATH` or `failed TASK message`)
/// and exits once the identifier has no task left. Killed on the way, nothing is lost: the events
/// it had not finished with are delivered again to the identifier's next session.
enum BackgroundCollect {
    /// Collects the downloads of `identifier` into `directory`; `.ok` when every task succeeded.
    static func run(identifier: String, directory: String) -> ToolExit {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            Console.err("courier: \(directory) is not a directory")
            return .usage
        }
        let delegate = CollectDelegate(directory: URL(fileURLWithPath: directory, isDirectory: true))
        let session = URLSession(configuration: .background(withIdentifier: identifier), delegate: delegate, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        // Done when the session holds no task (each leaves once its completion was delivered) and
        // the agent said every stored event was delivered (acknowledged), or there never was one.
        var delivered = session.currentTaskCount == 0
        while true {
            if delivered, session.currentTaskCount == 0 { break }
            delivered = delegate.finished.wait(timeout: .now() + 0.2) == .success || delivered
        }
        return delegate.failures.withLock { $0 } == 0 ? .ok : .other
    }
}

extension URLSession {
    /// How many tasks the session holds now (the agent's, for a background session).
    fileprivate var currentTaskCount: Int {
        let count = Locked(-1)
        let done = DispatchSemaphore(value: 0)
        getAllTasks { tasks in
            count.withLock { $0 = tasks.count }
            done.signal()
        }
        _ = done.wait(timeout: .now() + 5)
        return count.withLock { $0 }
    }
}

/// The collecting session's delegate: moves each file into the directory and prints the outcome.
private final class CollectDelegate: NSObject, URLSessionDownloadDelegate, Sendable {
    let directory: URL
    /// Signalled by `urlSessionDidFinishEvents(forBackgroundURLSession:)`.
    let finished = DispatchSemaphore(value: 0)
    /// Tasks that failed.
    let failures = Locked(0)

    init(directory: URL) {
        self.directory = directory
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        let name = downloadTask.originalRequest?.url?.lastPathComponent ?? ""
        let target = directory.appendingPathComponent("\(downloadTask.taskIdentifier)-\(name.isEmpty || name == "/" ? "download" : name)")
        do {
            try? FileManager.default.removeItem(at: target)
            try FileManager.default.moveItem(at: location, to: target)
            Console.out("collected \(downloadTask.taskIdentifier) \(target.path)")
        } catch {
            failures.withLock { $0 += 1 }
            Console.err("courier: task \(downloadTask.taskIdentifier): cannot move the download to \(target.path): \(error.localizedDescription)")
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let error else { return }
        failures.withLock { $0 += 1 }
        Console.out("failed \(task.taskIdentifier) \(error.localizedDescription)")
    }

    func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {
        finished.signal()
    }
}
