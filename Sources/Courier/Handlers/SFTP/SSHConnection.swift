internal import CSSH2
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One SSH connection (one TCP socket, one non-blocking libssh2 session) to a host, port and user,
/// shared by the session's sftp loads: it connects, verifies the host key, authenticates, then
/// runs its jobs on up to ``maximumChannels`` SFTP channels at once, reusing channels and the
/// connection for later jobs until it has been idle for ``idleLifetime``.
///
/// Everything here runs on the event-loop thread. libssh2 calls never block: a call that would
/// returns `LIBSSH2_ERROR_EAGAIN` and is repeated when the socket is ready. libssh2 keeps a
/// half-sent packet inside the session, and only the call that started it may finish it, so after
/// a call leaves data unsent (`LIBSSH2_SESSION_BLOCK_OUTBOUND`) no other channel is stepped until
/// that channel's call has completed (``outboundOwner``).
final class SSHConnection: @unchecked Sendable {
    enum Phase: Equatable {
        case resolving
        case connecting
        case handshaking
        case verifyingHostKey
        case authenticating
        case ready
        case closing
        case closed
    }

    /// SFTP channels per connection; sshd allows 10 sessions per connection by default.
    static let maximumChannels = 8
    /// An unused connection is closed after this long.
    static let idleLifetime: TimeInterval = 60
    /// A connection whose only work is cleaning up after stopped loads is dropped after this long
    /// without progress.
    static let cleanupLimit: TimeInterval = 30

    // State without `private` is shared with SSHConnection+HostKeyCheck.swift,
    // SSHConnection+Challenges.swift and SSHConnection+Closing.swift; like the rest, only the loop thread touches it.
    let key: SSHConnectionKey
    let url: URL
    let environment: HandlerEnvironment
    weak var pool: SSHConnectionPool?
    weak var loop: SSHEventLoop?
    var phase = Phase.resolving
    var fd: Int32 = -1
    var session: OpaquePointer?
    private var addresses: [SSHSocket.Address] = []
    private var addressIndex = 0
    private var lastConnectError: Int32 = ECONNREFUSED
    var setupDeadline: Date?
    var closeDeadline: Date?
    var waiting: [SFTPJob] = []
    var channels: [SFTPChannel] = []
    /// Idle channels being shut down while the connection closes.
    var closingChannels: [SFTPChannel] = []
    /// What libssh2 holds for channels dropped before they were shut down (a job still running, or
    /// the closing deadline passed): released as the session ends.
    var droppedHandles: [OpaquePointer] = []
    var droppedSFTP: [OpaquePointer] = []
    var outboundOwner: SFTPChannel?
    var authentication: SSHAuthentication?
    var hostKey: SSHHostKey?
    /// What the known-hosts files say about the server, read before the handshake.
    var recordedHostKeys: SSHRecordedHostKeys?
    /// The host-key types the handshake was limited to (recorded or accepted for the server).
    var negotiatedHostKeyTypes: [String] = []
    var challengeToken = 0
    var challengeOwner: SFTPJob?
    var info = SSHConnectionInfo()
    /// The connection's notes in the session's log (at `debug`).
    let log: SSHConnectionLog
    private var lastActivity = Date()
    private var lastProgress = Date()
    private var wantsRead = false
    private var wantsWrite = false

    /// `timeout`: how long connecting, the handshake and authentication may take (the delegate's
    /// time not counted); the idle timeout of the load that made the connection.
    init(key: SSHConnectionKey, url: URL, timeout: TimeInterval, environment: HandlerEnvironment, pool: SSHConnectionPool,
         loop: SSHEventLoop) {
        self.key = key
        self.url = url
        self.timeout = timeout
        self.environment = environment
        self.pool = pool
        self.loop = loop
        log = SSHConnectionLog(logger: environment.logger, key: key)
    }

    deinit {
        // A loop thread that ends while the process exits releases its connections after the exit
        // handlers closed the gate and OpenSSL cleaned up: freeing the session then would use
        // OpenSSL's freed locks, so the memory is left to the ending process.
        if SSHLibrary.exitGate.enter() {
            // The agent (inside the authentication) uses the session's allocator: it goes first.
            authentication = nil
            if let session { libssh2_session_free(session) }
            SSHLibrary.exitGate.leave()
        }
        if fd >= 0 { Glibc.close(fd) }
    }

    /// Whether new jobs may join this connection.
    var isAcceptingJobs: Bool {
        phase != .closing && phase != .closed
    }

    var isClosed: Bool { phase == .closed }

    /// How long setting up may take (see ``init(key:url:timeout:environment:pool:loop:)``).
    let timeout: TimeInterval

    // MARK: Jobs

    /// Adds a job; it starts when the connection is ready and a channel is free.
    func enqueue(_ job: SFTPJob) {
        job.connection = self
        job.metrics.reusedConnection = phase == .ready
        waiting.append(job)
        lastActivity = Date()
    }

    /// Stops a job: a waiting one is dropped, a running one cleans up on its channel.
    func cancel(_ job: SFTPJob) {
        job.cancel()
        if let index = waiting.firstIndex(where: { $0 === job }) {
            waiting.remove(at: index)
            job.discard()
            if challengeOwner === job { abandonSetup() }
        }
    }

    // MARK: Setting up

    /// Resolves the host (off the loop) and connects.
    func start() {
        info.connectStart = Date()
        setupDeadline = Date().addingTimeInterval(timeout)
        let host = key.host, port = key.port, url = self.url
        DispatchQueue.global().async { [weak self, weak loop] in
            let result = SSHSocket.resolve(host: host, port: port, url: url)
            let connection = self
            _ = loop?.execute { connection?.resolved(result) }
        }
    }

    private func resolved(_ result: Result<[SSHSocket.Address], URLError>) {
        guard phase == .resolving else { return }
        switch result {
        case .failure(let error): failSetup(error)
        case .success(let list):
            addresses = list
            addressIndex = 0
            connectNext()
        }
    }

    private func connectNext() {
        while addressIndex < addresses.count {
            switch SSHSocket.startConnect(to: addresses[addressIndex]) {
            case .success(let descriptor):
                fd = descriptor
                phase = .connecting
                return
            case .failure(let error):
                lastConnectError = error.code
                addressIndex += 1
            }
        }
        failSetup(SSHSocket.connectFailure(lastConnectError, host: key.host, port: key.port, url: url))
    }

    private func finishConnect() {
        let code = SSHSocket.connectError(of: fd)
        guard code == 0 else {
            Glibc.close(fd)
            fd = -1
            lastConnectError = code
            addressIndex += 1
            connectNext()
            return
        }
        info.connectEnd = Date()
        info.remote = SSHSocket.endpoint(of: fd, peer: true)
        info.local = SSHSocket.endpoint(of: fd, peer: false)
        log.connected(to: info.remote)
        guard SSHLibrary.isInitialized, let created = courier_ssh2_session_init() else {
            failSetup(URLError(.cannotLoadFromNetwork, url: url, description: "libssh2 could not be initialised."))
            return
        }
        libssh2_session_set_blocking(created, 0)
        limitHostKeyTypes(of: created)
        session = created
        info.handshakeStart = Date()
        phase = .handshaking
    }

    func beginAuthentication() {
        authentication = SSHAuthentication(key: key, url: url, environment: environment, log: log)
        setupDeadline = Date().addingTimeInterval(timeout)
        phase = .authenticating
    }

    private func stepAuthentication(_ session: OpaquePointer) -> Bool {
        guard let authentication else { return false }
        switch authentication.step(session: session) {
        case .again:
            return false
        case .progress:
            return true
        case .authenticated(let credential):
            if let credential, credential.persistence != .none {
                environment.credentialStorage?.set(credential, for: authentication.protectionSpace)
            }
            log.authenticated(with: authentication.methodName)
            self.authentication = nil
            setupDeadline = nil
            phase = .ready
            lastActivity = Date()
            return true
        case .needsCredential:
            presentAuthenticationChallenge(authentication)
            return false
        case .failed(let error):
            failSetup(error)
            return false
        }
    }

    /// The job presenting a challenge was stopped, or cancelled the challenge (`cancelling`): that
    /// job ends (cancelled), the others start over on a new connection (and are asked themselves).
    func abandonSetup(cancelling owner: SFTPJob? = nil) {
        challengeOwner = nil
        challengeToken += 1
        if let owner {
            owner.fail(URLError(.cancelled, url: owner.url, description: "The authentication challenge was cancelled."))
            waiting.removeAll { $0 === owner }
            owner.discard()
        }
        let others = waiting
        waiting = []
        beginClosing(failing: nil)
        pool?.resubmit(others, leaving: self)
    }

    /// Setting up failed: every waiting job fails with `error`.
    func failSetup(_ error: URLError) {
        let jobs = waiting
        waiting = []
        for job in jobs {
            job.fail(error)
            job.discard()
        }
        beginClosing(failing: error)
    }

    // MARK: Driving

    /// The socket and events to poll for, if any.
    var pollRequest: (fd: Int32, events: Int16)? {
        guard fd >= 0 else { return nil }
        switch phase {
        case .resolving, .closed:
            return nil
        case .connecting:
            return (fd, Int16(POLLOUT))
        case .verifyingHostKey:
            return nil
        case .authenticating where challengeOwner != nil:
            return nil
        case .handshaking, .authenticating, .closing:
            guard let session else { return nil }
            let directions = libssh2_session_block_directions(session)
            var events: Int16 = 0
            if directions & LIBSSH2_SESSION_BLOCK_INBOUND != 0 { events |= Int16(POLLIN) }
            if directions & LIBSSH2_SESSION_BLOCK_OUTBOUND != 0 { events |= Int16(POLLOUT) }
            return (fd, events == 0 ? Int16(POLLIN) : events)
        case .ready:
            if outboundOwner != nil { return (fd, Int16(POLLOUT)) }
            return wantsRead ? (fd, Int16(POLLIN)) : nil
        }
    }

    /// The next time the connection must be driven even without socket events.
    var deadline: Date? {
        switch phase {
        case .closing: return closeDeadline
        case .ready: return lastActivity.addingTimeInterval(Self.idleLifetime)
        default: return setupDeadline
        }
    }

    /// Does everything that can be done now; `revents`: what the last poll reported for the
    /// socket. Returns `true` when work is left that needs no waiting.
    func drive(revents: Int16, now: Date) -> Bool {
        if let setupDeadline, now >= setupDeadline, phase != .ready, phase != .closing, phase != .closed {
            failSetup(URLError(.timedOut, url: url, description: "Connecting to \(key.knownHostsName) timed out."))
        }
        var steps = 0
        while steps < 64 {
            steps += 1
            switch phase {
            case .resolving, .closed, .verifyingHostKey:
                return false
            case .connecting:
                guard revents & Int16(POLLOUT | POLLERR | POLLHUP) != 0 else { return false }
                finishConnect()
                if phase == .connecting { return false }
            case .handshaking:
                guard let session, stepHandshake(session) else { return false }
            case .authenticating:
                guard challengeOwner == nil, let session, stepAuthentication(session) else { return false }
            case .ready:
                return driveChannels(now: now)
            case .closing:
                stepClosing(now: now)
                return false
            }
        }
        return true
    }

    private func driveChannels(now: Date) -> Bool {
        guard let session else { return false }
        waiting.removeAll { $0.isCancelled }
        assignWaitingJobs()
        wantsRead = false
        var rounds = 0
        var progressedAtAll = false
        // Set when the rounds stop while jobs still progress: the loop comes back without sleeping.
        var moreWork = false
        while true {
            var progressed = false
            for channel in channels {
                if let owner = outboundOwner, owner !== channel { continue }
                let result = channel.step(session: session, isOutboundOwner: outboundOwner === channel)
                let outbound = libssh2_session_block_directions(session) & LIBSSH2_SESSION_BLOCK_OUTBOUND != 0
                switch result {
                case .blocked:
                    wantsRead = true
                    if outbound { outboundOwner = channel } else if outboundOwner === channel { outboundOwner = nil }
                case .idle:
                    if outboundOwner === channel { outboundOwner = nil }
                case .progressed, .opened, .closed:
                    progressed = true
                    if outboundOwner === channel { outboundOwner = nil }
                case .jobEnded(let job):
                    progressed = true
                    if outboundOwner === channel { outboundOwner = nil }
                    job.connection = nil
                    job.discard()
                case .sessionFailed(let code):
                    connectionLost(code)
                    return false
                }
                if phase != .ready { return false }
            }
            channels.removeAll { if case .closed = $0.state { return true } else { return false } }
            if progressed {
                progressedAtAll = true
                assignWaitingJobs()
            }
            rounds += 1
            if !progressed { break }
            if rounds >= 8 {
                moreWork = true
                break
            }
        }
        if progressedAtAll { lastProgress = now }
        let busy = channels.contains { $0.job != nil || $0.isOpening } || !waiting.isEmpty
        if busy { lastActivity = now }
        if !busy && outboundOwner == nil && now.timeIntervalSince(lastActivity) >= Self.idleLifetime {
            beginClosing(failing: nil)
            return false
        }
        let live = channels.contains { channel in channel.job.map { !$0.isOver && !$0.isCancelled } ?? false }
        if !live && waiting.isEmpty && channels.contains(where: { $0.job != nil })
            && now.timeIntervalSince(lastProgress) >= Self.cleanupLimit {
            beginClosing(failing: nil)
            return false
        }
        return moreWork
    }

    /// Gives waiting jobs idle channels, and opens one more channel when jobs still wait.
    private func assignWaitingJobs() {
        for channel in channels where channel.isIdle {
            guard !waiting.isEmpty else { break }
            let job = waiting.removeFirst()
            job.metrics.connection = info
            channel.assign(job)
        }
        if !waiting.isEmpty, !channels.contains(where: { $0.isOpening }), channels.count < Self.maximumChannels {
            channels.append(SFTPChannel())
        }
    }

    /// The session failed: jobs that never touched a file of a reused connection start over on a
    /// new one (the server may just have closed an idle connection); the others fail.
    private func connectionLost(_ code: Int32) {
        let message = session.flatMap { SFTPErrorMapping.lastErrorMessage(of: $0) }
        let error = SFTPErrorMapping.sessionError(code, message: message, established: true, url: url)
        var retry: [SFTPJob] = []
        var jobs = waiting
        waiting = []
        jobs.append(contentsOf: channels.compactMap(\.job))
        for job in jobs {
            job.connection = nil
            if !job.hasStarted && !job.isCancelled && !job.isOver && job.metrics.reusedConnection && !job.retriedOnNewConnection {
                job.retriedOnNewConnection = true
                job.metrics.reusedConnection = false
                retry.append(job)
            } else {
                job.fail(URLError(error.code, url: job.url, description: error.localizedDescription))
                job.discard()
            }
        }
        drop(channels)
        channels = []
        outboundOwner = nil
        beginClosing(failing: nil)
        if !retry.isEmpty { pool?.resubmit(retry, leaving: self) }
    }

}
