import Foundation

/// A session's SSH connections, one per host, port and user, plus the host keys the session
/// accepted (through a challenge, or recorded by `.acceptNew`). A connection that is closing is kept until it has closed, while a new one
/// for the same key serves new jobs. Used on the event-loop thread only.
final class SSHConnectionPool: @unchecked Sendable {
    let acceptedHostKeys = SSHAcceptedHostKeys()
    private let environment: HandlerEnvironment
    private weak var loop: SSHEventLoop?
    private var active: [SSHConnectionKey: SSHConnection] = [:]
    private var retiring: [SSHConnection] = []

    init(environment: HandlerEnvironment, loop: SSHEventLoop) {
        self.environment = environment
        self.loop = loop
    }

    /// Every connection, open or closing.
    var connections: [SSHConnection] {
        Array(active.values) + retiring
    }

    /// Runs `job` on the connection for its key, making one when needed.
    func submit(_ job: SFTPJob) {
        if let existing = active[job.key] {
            if existing.isAcceptingJobs {
                existing.enqueue(job)
                return
            }
            retiring.append(existing)
            active[job.key] = nil
        }
        guard let loop else {
            job.fail(URLError(.cancelled, url: job.url, description: "The session was invalidated."))
            return
        }
        let connection = SSHConnection(key: job.key, url: job.url, timeout: job.setupTimeout, environment: environment,
                                       pool: self, loop: loop)
        active[job.key] = connection
        connection.enqueue(job)
        connection.start()
    }

    /// Sends jobs a connection gave up on to a new connection.
    func resubmit(_ jobs: [SFTPJob], leaving connection: SSHConnection) {
        if active[connection.key] === connection {
            active[connection.key] = nil
            retiring.append(connection)
        }
        for job in jobs where !job.isCancelled { submit(job) }
    }

    /// Stops `job` wherever it is.
    func cancel(_ job: SFTPJob) {
        if let connection = job.connection {
            connection.cancel(job)
        } else {
            job.cancel()
            job.discard()
        }
    }

    /// Forgets connections that have closed.
    func removeClosed() {
        for (key, connection) in active where connection.isClosed || !connection.isAcceptingJobs {
            active[key] = nil
            if !connection.isClosed { retiring.append(connection) }
        }
        retiring.removeAll { $0.isClosed }
    }

    /// Closes the connections that run no job now.
    func closeIdleConnections() {
        for connection in connections { connection.closeIfIdle() }
        removeClosed()
    }

    /// Closes everything at once (the session is going away).
    func shutDownAll() {
        for connection in connections { connection.shutDown() }
        active.removeAll()
        retiring.removeAll()
    }
}
