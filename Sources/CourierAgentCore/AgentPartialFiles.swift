import Courier
import Foundation

/// The partial downloads in the agent's `downloads/` directory, and which of them may go.
///
/// A partial file is needed while a task's stored resume data names it (a checkpoint, a
/// suspension, the app's `downloadTask(withResumeData:)`), or while the app may still resume a
/// failed download from the resume data it was given (``AgentStore/keepPartial(_:until:)``, for
/// ``AgentOptions/partialRetention``). Everything else there is left over from a task that ended
/// or an agent that was killed: removed when the agent starts, before any transfer runs.
enum AgentPartialFiles {
    /// The name a partial file is known by (its last path component: resume data may spell the
    /// directory differently).
    static func name(of path: String) -> String {
        URL(fileURLWithPath: path).lastPathComponent
    }

    /// At start-up, with no transfer running: removes every file in `directory` that no stored
    /// task names and that is not kept for an app's resume data, and forgets expired kept files.
    static func sweepAtStart(_ store: AgentStore, rows: [AgentTaskRow], in directory: URL, now: Date) {
        let named = Set(rows.compactMap { $0.resumeData.flatMap(URLSessionDownloadTask.partialFilePath(ofResumeData:)).map(name(of:)) })
        let kept = (try? store.keptPartials()) ?? [:]
        for (file, expiry) in kept where expiry <= now { try? store.releasePartial(file) }
        for file in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] {
            if named.contains(file) || (kept[file].map { $0 > now } ?? false) { continue }
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(file))
        }
    }

    /// While running: the kept partial files whose time is up (their rows are forgotten now; the
    /// files go with the returned effects).
    static func sweepExpired(_ store: AgentStore, in directory: URL, now: Date) -> AgentEffects {
        var effects = AgentEffects()
        for (file, expiry) in (try? store.keptPartials()) ?? [:] where expiry <= now {
            try? store.releasePartial(file)
            effects.removals.append(directory.appendingPathComponent(file).path)
        }
        return effects
    }
}
