import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Finds the `courier-agent` executable and starts it, detached, for a background session that
/// found no agent listening.
///
/// The executable is, in order: the configuration's explicit path (tests), `$COURIER_AGENT_PATH`,
/// `courier-agent` next to the running executable (SwiftPM puts every product of a package in one
/// folder, so a test bundle or `courier` finds it), then `courier-agent` on `PATH`. An app that
/// uses background sessions ships `courier-agent` beside its own executable.
enum AgentLauncher {
    /// The executable's file name.
    static let executableName = "courier-agent"
    /// The variable naming the executable explicitly.
    static let pathVariable = "COURIER_AGENT_PATH"

    /// The agent executable, or `nil` when none is found.
    static func locate(explicit: String?, environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        let manager = FileManager.default
        var candidates: [String] = []
        if let explicit { candidates.append(explicit) }
        if let variable = environment[pathVariable], variable.hasPrefix("/") { candidates.append(variable) }
        if let running = try? manager.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append(URL(fileURLWithPath: running).deletingLastPathComponent().appendingPathComponent(executableName).path)
        }
        for directory in (environment["PATH"] ?? "").split(separator: ":") where directory.hasPrefix("/") {
            candidates.append("\(directory)/\(executableName)")
        }
        return candidates.first { path in
            var isDirectory: ObjCBool = false
            return manager.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
                && manager.isExecutableFile(atPath: path)
        }
    }

    /// Starts `executable` for `directories` in a session of its own (`setsid`), standard input
    /// from /dev/null and its output appended to the state directory's log, with the signal mask
    /// and dispositions reset. The child is reaped by a thread of its own when it ends.
    static func launch(_ executable: String, directories: BackgroundDirectories,
                       environment extra: [String: String], url: URL?) throws(URLError) {
        guard PrivateDirectory.prepare(directories.state, strict: true) else {
            throw URLError(.cannotCreateFile, url: url,
                           description: "The transfer agent's directory \(directories.state.path) cannot be created or is not this user's.")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, directories.logPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | 0x80 /* POSIX_SPAWN_SETSID */))

        let arguments = [executable, "--state-dir", directories.state.path, "--runtime-dir", directories.runtime.path]
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var variables = ProcessInfo.processInfo.environment
        for (name, value) in extra { variables[name] = value }
        let envp: [UnsafeMutablePointer<CChar>?] = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }

        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw URLError(.cannotConnectToHost, url: url,
                           description: "The transfer agent \(executable) could not be started: \(String(cString: strerror(result))).")
        }
        let started = child
        NamedThread.start("courier.reaper") {
            var status: Int32 = 0
            while waitpid(started, &status, 0) < 0 && errno == EINTR {}
        }
    }
}
