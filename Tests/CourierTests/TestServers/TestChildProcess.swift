import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A child process started with `posix_spawn`, for the test servers' helpers (sshd instances,
/// ssh-agent, ssh-add).
///
/// Foundation's `Process` passes on the signal mask of the thread that starts it, and libdispatch's
/// worker threads block most signals, so a daemon started from a test would ignore `SIGTERM`. This
/// resets the mask and the signal dispositions for the child, and reaps it with `waitpid` itself.
final class TestChildProcess: @unchecked Sendable {
    let pid: pid_t
    private let state = Locked<Int32?>(nil)

    /// Starts `path` with `arguments`; stdin is /dev/null, stdout and stderr go to `output` (appended)
    /// or /dev/null. `environment` replaces the environment when given. `diesWithTests`: the child
    /// gets `SIGKILL` when the test process ends (through `setpriv --pdeathsig`, from a thread that
    /// lives as long as the process, since the signal follows the thread that started the child).
    convenience init(_ path: String, _ arguments: [String], environment: [String: String]? = nil, output: URL? = nil,
                     diesWithTests: Bool) throws {
        let setpriv = "/usr/bin/setpriv"
        guard diesWithTests, FileManager.default.isExecutableFile(atPath: setpriv) else {
            try self.init(path, arguments, environment: environment, output: output)
            return
        }
        let pid = try SpawningThread.shared.perform {
            try TestChildProcess.spawn(setpriv, ["--pdeathsig", "KILL", "--", path] + arguments, environment: environment, output: output)
        }
        self.init(pid: pid)
    }

    private init(pid: pid_t) {
        self.pid = pid
    }

    /// Starts `path` with `arguments`; stdin is /dev/null, stdout and stderr go to `output` (appended)
    /// or /dev/null. `environment` replaces the environment when given.
    convenience init(_ path: String, _ arguments: [String], environment: [String: String]? = nil, output: URL? = nil) throws {
        self.init(pid: try Self.spawn(path, arguments, environment: environment, output: output))
    }

    private static func spawn(_ path: String, _ arguments: [String], environment: [String: String]?, output: URL?) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output?.path ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o644)
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
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let variables = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let envp: [UnsafeMutablePointer<CChar>?] = variables.map { strdup($0) } + [nil]
        defer { for pointer in envp { free(pointer) } }

        var child: pid_t = 0
        let result = posix_spawn(&child, path, &actions, &attributes, argv, envp)
        guard result == 0 else { throw FaultServerError("could not start \(path): \(String(cString: strerror(result)))") }
        return child
    }

    /// The exit status once the child has ended (it is reaped here).
    var exitStatus: Int32? {
        state.withLock { status in
            if status != nil { return status }
            var raw: Int32 = 0
            if waitpid(pid, &raw, WNOHANG) == pid { status = raw }
            return status
        }
    }

    var isRunning: Bool { exitStatus == nil }

    /// Waits up to `seconds` for the child to end; its exit status, or `nil` if it still runs.
    @discardableResult
    func wait(seconds: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let status = exitStatus { return status }
            usleep(5_000)
        }
        return exitStatus
    }

    /// `SIGTERM`, then `SIGKILL` if it has not ended within `grace` seconds.
    func stop(grace: Double = 3) {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        if wait(seconds: grace) == nil {
            kill(pid, SIGKILL)
            wait(seconds: 2)
        }
    }

    /// Runs a program to completion (bounded) and returns its exit status and output.
    static func run(_ path: String, _ arguments: [String], environment: [String: String]? = nil,
                    timeout: Double = 30) throws -> (status: Int32, output: String) {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("courier-child-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }
        let child = try TestChildProcess(path, arguments, environment: environment, output: log)
        guard let raw = child.wait(seconds: timeout) else {
            child.stop(grace: 1)
            throw FaultServerError("\(path) did not finish in \(timeout) s")
        }
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        let status = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
        return (status, output)
    }
}

/// A thread that lives as long as the test process and starts children for others, so a child's
/// parent-death signal fires only when the process ends.
private final class SpawningThread: @unchecked Sendable {
    static let shared = SpawningThread()

    private let condition = NSCondition()
    private var work: [() -> Void] = []

    private init() {
        let thread = Thread { [self] in loop() }
        thread.name = "test-spawner"
        thread.start()
    }

    /// Runs `body` on the thread and returns its result.
    func perform<T>(_ body: @escaping () throws -> T) throws -> T {
        let result = Locked<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        condition.lock()
        work.append {
            result.withLock { $0 = Result { try body() } }
            done.signal()
        }
        condition.signal()
        condition.unlock()
        done.wait()
        guard let outcome = result.current else { throw FaultServerError("the spawning thread gave no result") }
        return try outcome.get()
    }

    private func loop() {
        while true {
            condition.lock()
            while work.isEmpty { condition.wait() }
            let next = work.removeFirst()
            condition.unlock()
            next()
        }
    }
}
