import Foundation

/// Where the transfer agent keeps its files, and where its socket is.
///
/// - The **state directory** holds the database (`agent.sqlite`, WAL mode), partial downloads
///   (`downloads/`), finished downloads not yet delivered (`finished/`), upload bodies
///   (`uploads/`) and the agent's log (`agent.log`): `$COURIER_DATA_HOME/Background` when that
///   variable is an absolute path (the sandbox the test suites and `courier` runs use), else
///   `$XDG_STATE_HOME/courier`, else `~/.local/state/courier`.
/// - The **runtime directory** holds the socket (`agent.sock`) and the single-instance lock
///   (`agent.lock`): `$COURIER_DATA_HOME/Background/run`, else `$XDG_RUNTIME_DIR/courier`, else
///   the state directory's `run/`.
///
/// Both are made with mode 0700; the agent refuses to run in directories another user owns.
package struct BackgroundDirectories: Sendable, Equatable, Codable {
    /// The state directory.
    package var state: URL
    /// The runtime directory.
    package var runtime: URL

    /// Directories given explicitly (the tests' per-test agents, `courier-agent --state-dir`).
    package init(state: URL, runtime: URL) {
        self.state = state
        self.runtime = runtime
    }

    /// The directories for `environment`, by the rules above.
    package static func resolve(environment: [String: String] = ProcessInfo.processInfo.environment,
                                home: @autoclosure () -> URL = FileManager.default.homeDirectoryForCurrentUser) -> BackgroundDirectories {
        if let sandbox = environment[CourierDataDirectory.overrideVariable], sandbox.hasPrefix("/") {
            let state = URL(fileURLWithPath: sandbox, isDirectory: true).appendingPathComponent("Background", isDirectory: true)
            return BackgroundDirectories(state: state, runtime: state.appendingPathComponent("run", isDirectory: true))
        }
        let state: URL
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") {
            state = URL(fileURLWithPath: xdg, isDirectory: true).appendingPathComponent("courier", isDirectory: true)
        } else {
            state = home().appendingPathComponent(".local/state/courier", isDirectory: true)
        }
        let runtime: URL
        if let xdg = environment["XDG_RUNTIME_DIR"], xdg.hasPrefix("/") {
            runtime = URL(fileURLWithPath: xdg, isDirectory: true).appendingPathComponent("courier", isDirectory: true)
        } else {
            runtime = state.appendingPathComponent("run", isDirectory: true)
        }
        return BackgroundDirectories(state: state, runtime: runtime)
    }

    /// The agent's socket.
    package var socketPath: String { runtime.appendingPathComponent(AgentProtocol.socketName).path }
    /// The single-instance lock file.
    package var lockPath: String { runtime.appendingPathComponent("agent.lock").path }
    /// The database.
    package var databasePath: String { state.appendingPathComponent("agent.sqlite").path }
    /// Partial downloads (the agent's temporary directory).
    package var downloads: URL { state.appendingPathComponent("downloads", isDirectory: true) }
    /// Finished downloads waiting to be delivered.
    package var finished: URL { state.appendingPathComponent("finished", isDirectory: true) }
    /// Copies of upload bodies.
    package var uploads: URL { state.appendingPathComponent("uploads", isDirectory: true) }
    /// The agent's log, where its standard output and error go when a session starts it.
    package var logPath: String { state.appendingPathComponent("agent.log").path }
}
