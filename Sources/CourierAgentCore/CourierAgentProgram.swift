import Courier
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The transfer agent as a program: `courier-agent` and `courier agent run` call ``run(arguments:)``.
///
/// It checks its directories (0700, this user's — it never runs in another user's), takes the
/// single-instance lock, opens the database, listens, continues the stored tasks, and exits after
/// being idle (no client, nothing to run) for the idle timeout.
public enum CourierAgentProgram {
    /// Runs the agent; returns the exit status (0 after an idle exit or when another agent already
    /// runs for these directories).
    public static func run(arguments: [String]) -> Int32 {
        let environment = ProcessInfo.processInfo.environment
        let options: AgentOptions
        do {
            options = try AgentOptions.parse(arguments, environment: environment)
        } catch {
            FileHandle.standardError.write(Data("courier-agent: \(error)\nusage: courier-agent [--state-dir DIR] [--runtime-dir DIR] [--idle-exit SECONDS]\n".utf8))
            return 64
        }
        let directories = options.directories(environment: environment)
        umask(0o077)
        for directory in [directories.state, directories.runtime, directories.downloads, directories.finished] {
            guard PrivateDirectory.prepare(directory, strict: true) else {
                AgentLog.write("refusing to run: \(directory.path) cannot be made, or is not a directory of this user's (uid \(geteuid()))")
                return 77
            }
        }
        // Courier's download files go to the temporary directory: the agent's is in its state
        // directory, so partial downloads survive a restart and finished ones move with a rename.
        setenv("TMPDIR", directories.downloads.path, 1)

        let lock = open(directories.lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lock >= 0 else {
            AgentLog.write("cannot open \(directories.lockPath): \(String(cString: strerror(errno)))")
            return 73
        }
        // An agent that is exiting still holds the lock for a moment: wait a little for it.
        var locked = false
        for _ in 0..<40 {
            if flock(lock, LOCK_EX | LOCK_NB) == 0 { locked = true; break }
            usleep(50_000)
        }
        guard locked else {
            AgentLog.write("another agent runs for \(directories.runtime.path)")
            return 0
        }

        let agent: Agent
        do {
            agent = try Agent(directories: directories, options: options)
        } catch {
            AgentLog.write("cannot open the database \(directories.databasePath): \(error)")
            return 74
        }
        let listener: Int32
        let inherited = AgentServer.inheritedListener(environment: environment)
        if let inherited {
            listener = inherited
        } else {
            do {
                listener = try AgentServer.listen(at: directories.socketPath)
            } catch {
                AgentLog.write("\(error)")
                return 71
            }
        }
        try? Data("\(getpid())\n".utf8).write(to: directories.runtime.appendingPathComponent("agent.pid"))
        AgentServer(listener: listener, agent: agent).start()
        AgentLog.write("listening at \(directories.socketPath)")
        _ = agent.tick()
        while true {
            usleep(250_000)
            if agent.tick() { break }
        }
        // Stop taking clients before releasing the lock, so a client that comes now starts a new
        // agent. An inherited socket stays: systemd listens on it and starts the agent again.
        if inherited == nil { unlink(directories.socketPath) }
        unlink(directories.runtime.appendingPathComponent("agent.pid").path)
        AgentLog.write("idle for \(options.idleExit) s: exiting")
        return 0
    }
}
