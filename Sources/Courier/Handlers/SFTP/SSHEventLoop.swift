import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The thread that drives every sftp load of one session: it `poll()`s the sockets of the session's
/// SSH connections and steps their non-blocking libssh2 sessions, so any number of transfers needs
/// this one thread.
///
/// Other threads never touch libssh2: they queue a command (start, stop, resume a job) and wake the
/// loop through a pipe. The loop is a per-session resource (``HandlerEnvironment/resources``),
/// created on first use and shut down with the session, which closes its connections.
final class SSHEventLoop: HandlerSessionResource, @unchecked Sendable {
    /// The key under which a session keeps its loop.
    static let resourceKey = "ssh.loop"
    /// The longest the loop sleeps, so deadlines are checked at least this often.
    static let maximumWait: TimeInterval = 1

    private let lock = Lock()
    private var commands: [@Sendable () -> Void] = []
    private var stopping = false
    private var wakeScheduled = false
    private let wakeRead: Int32
    private let wakeWrite: Int32
    /// The connections; touched on the loop thread only.
    private var pool: SSHConnectionPool?

    /// A loop with its own thread; `nil` if libssh2 cannot be initialised or no pipe can be made.
    init?(environment: HandlerEnvironment) {
        guard SSHLibrary.isInitialized else { return nil }
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        wakeRead = ends[0]
        wakeWrite = ends[1]
        pool = SSHConnectionPool(environment: environment, loop: self)
        NamedThread.start("courier.ssh") { [self] in run() }
    }

    deinit {
        // Closed only here, when nothing can signal the pipe any more.
        Glibc.close(wakeRead)
        Glibc.close(wakeWrite)
    }

    /// The session's loop, created on first use.
    static func shared(in environment: HandlerEnvironment) -> SSHEventLoop? {
        environment.resources.resource(resourceKey) { SSHEventLoop(environment: environment) }
    }

    /// Runs `command` on the loop thread; `false` when the loop has stopped.
    @discardableResult
    func execute(_ command: @escaping @Sendable () -> Void) -> Bool {
        let (accepted, wake): (Bool, Bool) = lock.withLock {
            if stopping { return (false, false) }
            commands.append(command)
            defer { wakeScheduled = true }
            return (true, !wakeScheduled)
        }
        if wake { signal() }
        return accepted
    }

    /// Wakes the loop so it steps its jobs again (a consumer caught up, upload bytes arrived).
    func wake() {
        execute {}
    }

    /// Starts `job`; `false` when the loop has stopped.
    func submit(_ job: SFTPJob) -> Bool {
        execute { [self] in pool?.submit(job) }
    }

    /// Stops `job`.
    func cancel(_ job: SFTPJob) {
        execute { [self] in pool?.cancel(job) }
    }

    /// Closes the connections that run no job now (later loads connect again).
    func closeIdleConnections() {
        execute { [self] in pool?.closeIdleConnections() }
    }

    func shutDown() {
        let wake: Bool = lock.withLock {
            defer { stopping = true }
            return !stopping
        }
        if wake { signal() }
    }

    private func signal() {
        var byte: UInt8 = 1
        _ = Glibc.write(wakeWrite, &byte, 1)
    }

    private func drainWakePipe() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while Glibc.read(wakeRead, &buffer, buffer.count) > 0 {}
    }

    private func run() {
        var events: [ObjectIdentifier: Int16] = [:]
        while true {
            let (pending, stop): ([@Sendable () -> Void], Bool) = lock.withLock {
                defer {
                    commands.removeAll(keepingCapacity: true)
                    wakeScheduled = false
                }
                return (commands, stopping)
            }
            if stop { break }
            // The process is exiting: touch libssh2 no more (see SSHLibrary.exitGate).
            guard SSHLibrary.exitGate.enter() else { return }
            for command in pending { command() }
            guard let pool else {
                SSHLibrary.exitGate.leave()
                break
            }

            let now = Date()
            var moreWork = false
            var wait = Self.maximumWait
            var descriptors = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            var owners: [SSHConnection] = []
            for connection in pool.connections {
                if connection.drive(revents: events[ObjectIdentifier(connection)] ?? 0, now: now) { moreWork = true }
                if let request = connection.pollRequest {
                    descriptors.append(pollfd(fd: request.fd, events: request.events, revents: 0))
                    owners.append(connection)
                }
                if let deadline = connection.deadline { wait = min(wait, max(deadline.timeIntervalSince(now), 0.01)) }
            }
            pool.removeClosed()
            SSHLibrary.exitGate.leave()
            let milliseconds = moreWork ? 0 : Int32(wait * 1000)
            _ = poll(&descriptors, nfds_t(descriptors.count), milliseconds)
            events.removeAll(keepingCapacity: true)
            for (index, connection) in owners.enumerated() {
                events[ObjectIdentifier(connection)] = descriptors[index + 1].revents
            }
            if descriptors[0].revents != 0 { drainWakePipe() }
        }
        let remaining: [@Sendable () -> Void] = lock.withLock {
            defer { commands.removeAll() }
            return commands
        }
        guard SSHLibrary.exitGate.enter() else { return }
        defer { SSHLibrary.exitGate.leave() }
        for command in remaining { command() }
        pool?.shutDownAll()
        pool = nil
    }
}
