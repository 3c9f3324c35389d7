import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What the test servers (nginx, the FTP servers, sshd) leave behind when the test process exits:
/// one exit handler runs the registered actions, stops the registered processes (SIGTERM, then
/// SIGKILL for any still running after a second) and removes the registered directories.
enum TestServerExitCleanup {
    private struct Registry {
        var actions: [@Sendable () -> Void] = []
        var pids: [Int32] = []
        var directories: [URL] = []
        var registered = false
    }

    private static let registry = Locked(Registry())

    /// Runs `action` at exit, before processes are stopped (closing a pipe, locking an account).
    static func atExit(_ action: @escaping @Sendable () -> Void) {
        update { $0.actions.append(action) }
    }

    /// Stops the process `pid` at exit.
    static func stopAtExit(pid: Int32) {
        guard pid > 0 else { return }
        update { $0.pids.append(pid) }
    }

    /// Removes `directory` at exit.
    static func removeAtExit(_ directory: URL) {
        update { $0.directories.append(directory) }
    }

    private static func update(_ change: (inout Registry) -> Void) {
        let register: Bool = registry.withLock { current in
            change(&current)
            defer { current.registered = true }
            return !current.registered
        }
        if register { atexit(testServerExitHandler) }
    }

    fileprivate static func run() {
        let current = registry.current
        for action in current.actions { action() }
        for pid in current.pids { kill(pid, SIGTERM) }
        var waited = 0
        while waited < 100, current.pids.contains(where: { isRunning($0) }) {
            usleep(10_000)
            waited += 1
        }
        for pid in current.pids where isRunning(pid) { kill(pid, SIGKILL) }
        for directory in current.directories { try? FileManager.default.removeItem(at: directory) }
    }

    /// Whether `pid` still runs (a child that ended is reaped here, so it does not count).
    private static func isRunning(_ pid: Int32) -> Bool {
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { return false }
        return kill(pid, 0) == 0
    }
}

private func testServerExitHandler() {
    TestServerExitCleanup.run()
}
