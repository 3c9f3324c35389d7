internal import CCurl
import Foundation
import Synchronization

/// One libcurl multi handle and the thread that drives it: every http(s) and ftp transfer of a
/// session runs here, so thousands of transfers need one thread, and connections (and HTTP/2
/// streams) are shared between the session's tasks.
///
/// The multi handle uses libcurl's socket interface: libcurl says which sockets to watch
/// (``CurlEventPoller``, an epoll set) and when its next timer is due; the loop thread sleeps in
/// epoll and hands ready sockets and due timers to `curl_multi_socket_action`.
///
/// The thread runs only while there is work: it starts with the first transfer and ends once no
/// transfer has run for ``idleLinger`` (idle connections stay in the multi handle for the next
/// transfer, which starts a new thread). So a session that is never invalidated — kept alive by a
/// delegate that holds it, say — costs no thread while it is idle, as FoundationNetworking's
/// sessions cost none; sequential requests on one session keep the one thread.
///
/// Whoever holds the *drive lock* may call libcurl: the loop thread, between two sleeps, or a
/// thread that starts a transfer. A transfer is started on the calling thread when the loop is
/// asleep with nothing to do and the lock is free (`add`): libcurl sends the request right there
/// and the loop, asleep in epoll, is not woken for it — on a machine where waking a sleeping thread
/// costs tens of microseconds, that is a large part of a small request. Otherwise the command is
/// queued: an awake loop looks at the queue before it sleeps again (and takes a burst of commands in
/// one pass, which keeps many streams of one HTTP/2 connection on one thread), and a sleeping one is
/// woken through the poller's eventfd. `remove` and `unpause` are always queued (libcurl may answer
/// them with callbacks into a handler whose caller holds its locks). Nothing ever waits for the
/// drive lock while holding another lock: callers only *try* it. The loop thread blocks on it,
/// holding nothing; so does `shutDown` → `cleanUp` when no loop thread runs, which can then wait
/// only for a thread driving inline, and that thread holds nothing else either.
///
/// Once `shutDown` has begun (`stopping`), `submit` refuses commands: a refused `watch`,
/// `service` or `unwatch` calls its client back (`loopDidStop`, the `unwatch` closure) later on
/// another thread, never on the submitting one, so a client may submit them with its own lock held
/// while the loop runs and while it stops.
///
/// Between I/O passes the thread also runs the Swift jobs of the session's
/// ``URLSessionLoopTaskExecutor`` (``enqueueJob(_:fallback:)``), with no lock held.
final class CurlMultiLoop: HandlerSessionResource, @unchecked Sendable {
    /// The key under which a session keeps its loop.
    static let resourceKey = "curl.multi"

    /// The longest the loop sleeps without a reason to wake (a safety net; libcurl's timers and
    /// the eventfd normally wake it). A sleep that lasts this long with nothing happening is followed
    /// by one pass over every transfer (`runAll`), as libcurl's easy interface runs each transfer at
    /// least once a second.
    private static let longestSleepMilliseconds = 1000

    /// How long the loop thread stays without transfers before it ends (milliseconds): long enough
    /// that a session's next request, sent as the last one completes, finds it awake.
    static let idleLinger = 250

    /// The most Swift jobs run in one go before the loop looks at its sockets again.
    static let jobBatch = 64

    /// The multi handle; used with the drive lock held.
    let multi: UnsafeMutableRawPointer
    private let poller: CurlEventPoller
    /// Held while calling libcurl (see the type's documentation).
    private let driveLock = Lock()
    /// Guards `commands`, `stopping`, `threadRunning`, `loopSleepsUntil`, `loopThread` and the jobs.
    private let stateLock = Lock()
    private var commands: [Command] = []
    /// Swift jobs for the loop thread (``enqueueJob(_:fallback:)``), run between I/O passes.
    private var jobs = CurlLoopJobQueue()
    /// The loop thread while one runs (``isLoopThread``).
    private var loopThread: pthread_t?
    private var stopping = false
    /// Whether the loop thread runs. Only a `submit` that finds it not running starts one, and only
    /// the thread itself, finding nothing to do, sets it back.
    private var threadRunning = false
    /// Until when (monotonic nanoseconds) the loop thread sleeps; 0 while it is awake (it then looks
    /// at libcurl's timer before it sleeps again).
    private var loopSleepsUntil: UInt64 = 0
    /// Set once the multi handle is cleaned up; guarded by the drive lock.
    private var closed = false
    /// Easy handles of finished http(s) transfers, for the next ones.
    let httpHandles: CurlEasyHandlePool
    /// Transfers added to the multi handle, by easy handle address. Guarded by the drive lock.
    var active: [UnsafeMutableRawPointer: CurlTransfer] = [:] {
        didSet { activeCount.store(active.count, ordering: .relaxed) }
    }
    /// `active.count`, readable without the drive lock: a thread starting a transfer does not even
    /// try the lock while transfers run (a stale value only sends it down the other path).
    private let activeCount = Atomic<Int>(0)
    /// Sockets Courier reads and writes itself, outside libcurl's multi handle (WebSocket
    /// connections, stream tasks: ``CurlLoopSocketClient``), by descriptor: the one table of who
    /// serves each such socket. A socket with no interest stays here but leaves the epoll set.
    /// Guarded by the drive lock.
    private var clients: [Int32: any CurlLoopSocketClient] = [:]

    /// A loop with a new multi handle; `nil` if libcurl or the system cannot make one.
    init?(maximumConnectionsPerHost: Int) {
        guard CurlGlobal.isInitialized, let poller = CurlEventPoller(), let multi = curl_multi_init() else { return nil }
        self.multi = multi
        self.poller = poller
        httpHandles = CurlEasyHandlePool(capacity: max(2 * maximumConnectionsPerHost, 16))
        _ = courier_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        if maximumConnectionsPerHost > 0 {
            _ = courier_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, maximumConnectionsPerHost)
        }
        // Keep idle connections for reuse: without this libcurl keeps only 4 per running transfer
        // and reconnects whenever fewer transfers run.
        _ = courier_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(4 * maximumConnectionsPerHost, 64))
        _ = courier_multi_setopt_socket_function(multi, curlSocketCallback)
        // Unretained: the session's resources keep the loop alive until the handle is cleaned up
        // (by the loop thread, or by `shutDown` when none runs), and so does a running thread.
        _ = courier_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, Unmanaged.passUnretained(self).toOpaque())
    }

    /// The session's loop, created on first use.
    static func shared(in environment: HandlerEnvironment) -> CurlMultiLoop? {
        environment.resources.resource(resourceKey) {
            CurlMultiLoop(maximumConnectionsPerHost: environment.maximumConnectionsPerHost)
        }
    }

    /// Starts `transfer`: on this thread when the drive lock is free, otherwise on the loop thread.
    func add(_ transfer: CurlTransfer) { submit(.add(transfer), driveHere: true) }

    /// Stops `transfer`; it reports nothing more.
    func remove(_ transfer: CurlTransfer) { submit(.remove(transfer), driveHere: false) }

    /// Continues a transfer paused by its write callback. Done by the loop thread: libcurl hands
    /// over held-back data from inside the call, and the caller may hold locks those reports take.
    func unpause(_ transfer: CurlTransfer) { submit(.unpause(transfer), driveHere: false) }

    /// Runs every transfer once, on the loop thread after the current libcurl call, for a transfer
    /// libcurl may have left waiting for nothing (``CurlFTPDoPhaseNudge``). Callable from a callback.
    func nudge() { submit(.nudge, driveHere: false) }

    /// Watches `socket` for `client` with this interest, replacing an earlier one: the loop thread
    /// passes the socket's readiness to the client's
    /// ``CurlLoopSocketClient/serviceSocket(on:readable:writable:)`` instead of libcurl, and keeps
    /// running while any client's socket is known. With neither interest the socket stays known but
    /// leaves the epoll set (a hung-up socket nobody reads does not wake the loop again and again).
    /// Callable from any thread, with locks held (also the client's own: on a stopping loop its
    /// `loopDidStop` comes later, on another thread), also from the client's own service (it
    /// applies before the loop sleeps again).
    func watch(_ socket: Int32, for client: any CurlLoopSocketClient, readable: Bool, writable: Bool) {
        submit(.watch(socket, client, readable: readable, writable: writable), driveHere: false)
    }

    /// Forgets `socket` and then runs `then` on the loop thread, where it may close the socket:
    /// no libcurl socket can take the descriptor's number before the loop has forgotten it. Once
    /// the loop is stopping, `then` runs soon on another thread (never within this call). Callable
    /// from any thread, with locks held (also those `then` takes).
    func unwatch(_ socket: Int32, then: @escaping @Sendable () -> Void) {
        submit(.unwatch(socket, then: then), driveHere: false)
    }

    /// Runs `client`'s service on the loop thread soon (drive lock held), with no readiness
    /// reported: for new work, or bytes a TLS layer holds where epoll cannot see them. Callable
    /// from any thread, with locks held (on a stopping loop the client's `loopDidStop` comes later,
    /// on another thread).
    func service(_ client: any CurlLoopSocketClient) { submit(.service(client), driveHere: false) }

    /// Takes `transfer`'s connection away from libcurl on the loop thread, with every byte libcurl
    /// read past the response's head (``CurlUpgradeSocket``), and removes the transfer; `completion`
    /// runs there with the socket, or with why it could not be had (the transfer ended first).
    func handOver(_ transfer: CurlTransfer, completion: @escaping @Sendable (Result<HandedOverConnection, URLError>) -> Void) {
        submit(.handOver(transfer, completion), driveHere: false)
    }

    /// Queues `job` to run on the loop thread after its current I/O pass, after the jobs queued
    /// before it: starts the thread when none runs, and wakes it when it sleeps (a job queued by the
    /// loop thread itself wakes nothing; it runs before the thread sleeps again). `false` once the
    /// loop has stopped: the caller runs the job elsewhere. Jobs still queued when the loop stops
    /// run on `fallback`, in order, before any job refused later. Callable from any thread.
    func enqueueJob(_ job: CurlLoopJob, fallback: DispatchQueue) -> Bool {
        enum Next { case refused, queued, wake, startThread }
        let next: Next = stateLock.withLock {
            guard jobs.append(job, fallback: fallback) else { return .refused }
            if stopping { return .queued }
            if !threadRunning {
                threadRunning = true
                return .startThread
            }
            guard loopSleepsUntil != 0 else { return .queued }
            // One wake is enough: later submitters see an awake loop, which looks before it sleeps.
            loopSleepsUntil = 0
            return .wake
        }
        switch next {
        case .refused: return false
        case .queued: break
        case .wake: poller.wake()
        case .startThread: NamedThread.start("courier.curl") { [self] in run() }
        }
        return true
    }

    /// Whether the caller runs on the loop thread.
    var isLoopThread: Bool {
        stateLock.withLock { loopThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    func shutDown() {
        let threadRuns: Bool = stateLock.withLock {
            stopping = true
            return threadRunning
        }
        if threadRuns {
            poller.wake()
        } else {
            cleanUp()
        }
    }

    // MARK: Commands

    private func submit(_ command: Command, driveHere: Bool) {
        let (accepted, loopIsAsleep, startThread): (Bool, Bool, Bool) = stateLock.withLock {
            if stopping { return (false, false, false) }
            commands.append(command)
            if !threadRunning {
                threadRunning = true
                return (true, false, true)
            }
            return (true, loopSleepsUntil != 0, false)
        }
        guard accepted else {
            abandonRefused(command)
            return
        }
        if startThread {
            NamedThread.start("courier.curl") { [self] in run() }
            return
        }
        // An awake loop looks at the commands before it sleeps again (`run`), and takes a burst of
        // them in one pass.
        guard loopIsAsleep else { return }
        if driveHere, activeCount.load(ordering: .relaxed) == 0,
           let driven = driveLock.withLockIfAvailable({ driveIfIdle() }) {
            switch driven {
            case .started(let nextTimer):
                // Wake the loop only if libcurl now needs it sooner than it planned to wake.
                if let nextTimer, sleepsPast(milliseconds: nextTimer) { poller.wake() }
                return
            case .stopping:
                return
            case .busy:
                break
            }
        }
        poller.wake()
    }

    /// What a thread starting a transfer did with the drive lock.
    private enum InlineDrive {
        /// It drove libcurl; libcurl's next timer is due in this many milliseconds (`nil`: none).
        case started(nextTimer: Int?)
        /// Transfers are running: the loop thread is at work on them and takes the command.
        case busy
        /// The loop is stopping; the command was abandoned.
        case stopping
    }

    /// Drives libcurl on this thread when no transfer is running (drive lock held). With transfers
    /// running the loop thread is busy with them anyway, and two threads taking turns on one
    /// connection (HTTP/2 streams) only hand the lock back and forth.
    private func driveIfIdle() -> InlineDrive {
        guard active.isEmpty || closed else { return .busy }
        return drive() ? .started(nextTimer: nextTimeoutMilliseconds()) : .stopping
    }

    /// Applies queued commands, runs libcurl's due timers and reports finished transfers. Call with
    /// the drive lock held. Returns `false` (touching nothing) once the loop is stopping.
    private func drive() -> Bool {
        let (pending, stop): ([Command], Bool) = stateLock.withLock {
            defer { commands.removeAll(keepingCapacity: true) }
            return (commands, stopping)
        }
        if stop || closed {
            abandon(pending)
            return false
        }
        var nudged = false
        for command in pending {
            if case .nudge = command { nudged = true } else { apply(command) }
        }
        if nudged { runAll() }
        runDueTimers()
        collectFinished()
        return true
    }

    private func apply(_ command: Command) {
        switch command {
        case .add(let transfer):
            let key = transfer.easy
            // A transfer stopped before the loop took it (``CurlLoad/stop()``) is not started.
            guard active[key] == nil, !transfer.isAbandoned else { return }
            if curl_multi_add_handle(multi, transfer.easy) == CURLM_OK {
                active[key] = transfer
                transfer.attach(to: self)
            } else {
                transfer.finish(result: CURLE_FAILED_INIT)
            }
        case .remove(let transfer):
            let key = transfer.easy
            if active.removeValue(forKey: key) != nil {
                curl_multi_remove_handle(multi, transfer.easy)
            }
            transfer.release()
        case .unpause(let transfer):
            if active[transfer.easy] != nil {
                curl_easy_pause(transfer.easy, CURLPAUSE_CONT)
            }
        case .nudge:
            break // drive() runs one pass for all the nudges it takes
        case .watch(let socket, let client, let readable, let writable):
            clients[socket] = client
            if readable || writable {
                poller.watch(socket, readable: readable, writable: writable)
            } else {
                poller.unwatch(socket)
            }
        case .unwatch(let socket, let then):
            if clients.removeValue(forKey: socket) != nil { poller.unwatch(socket) }
            then()
        case .service(let client):
            client.serviceSocket(on: self, readable: false, writable: false)
        case .handOver(let transfer, let completion):
            completion(takeConnection(of: transfer))
        }
    }

    // MARK: The loop thread

    private func run() {
        stateLock.withLock { loopThread = pthread_self() }
        var ready: [CurlEventPoller.Event] = []
        /// Since when (monotonic nanoseconds) no transfer has run; 0 while one does.
        var idleSince: UInt64 = 0
        /// Whether the last sleep ran its whole safety-net length with nothing to wake it.
        var safetyPassDue = false
        while true {
            let step: LoopStep = driveLock.withLock {
                var running: Int32 = 0
                if safetyPassDue { runAll() }
                for event in ready {
                    if let client = clients[event.socket] {
                        // An error or hang-up counts as both: the client's read or write finds out.
                        client.serviceSocket(on: self, readable: event.mask & (CURL_CSELECT_IN | CURL_CSELECT_ERR) != 0,
                                             writable: event.mask & (CURL_CSELECT_OUT | CURL_CSELECT_ERR) != 0)
                    } else {
                        _ = curl_multi_socket_action(multi, event.socket, event.mask, &running)
                    }
                }
                guard drive() else { return .stop }
                var sleep = min(nextTimeoutMilliseconds() ?? Self.longestSleepMilliseconds, Self.longestSleepMilliseconds)
                let now = monotonicNanoseconds()
                if active.isEmpty && clients.isEmpty {
                    if idleSince == 0 { idleSince = now }
                    let idleFor = Int((now &- idleSince) / 1_000_000)
                    sleep = min(sleep, max(0, Self.idleLinger - idleFor))
                } else {
                    idleSince = 0
                }
                return stateLock.withLock {
                    // Commands submitted while the loop was awake did not wake it: look before sleeping.
                    guard commands.isEmpty, !stopping else { return .sleep(0) }
                    guard jobs.isEmpty else { return .runJobs }
                    if active.isEmpty, clients.isEmpty, idleSince != 0, Int((now &- idleSince) / 1_000_000) >= Self.idleLinger {
                        threadRunning = false
                        loopThread = nil
                        return .end
                    }
                    loopSleepsUntil = now &+ UInt64(sleep) * 1_000_000
                    return .sleep(Int32(sleep))
                }
            }
            switch step {
            case .sleep(let milliseconds):
                let sleptFrom = monotonicNanoseconds()
                ready = poller.wait(milliseconds: milliseconds)
                stateLock.withLock { loopSleepsUntil = 0 }
                // A whole second with no socket event and no timer: run every transfer once, as
                // libcurl's easy interface does, so that a transfer libcurl forgot to schedule
                // (``CurlFTPDoPhaseNudge`` describes one such stall) waits a second, not its timeout.
                safetyPassDue = ready.isEmpty && milliseconds >= Self.longestSleepMilliseconds
                    && monotonicNanoseconds() &- sleptFrom >= UInt64(milliseconds) * 1_000_000
            case .runJobs:
                // With more jobs waiting, look at the sockets (without sleeping) before the next batch.
                ready = runJobs() ? poller.wait(milliseconds: 0) : []
                safetyPassDue = false
                idleSince = 0 // the thread lingers `idleLinger` after the last job too
            case .end:
                return
            case .stop:
                cleanUp()
                stateLock.withLock { loopThread = nil }
                return
            }
        }
    }

    /// Runs queued jobs in order, at most ``jobBatch``, holding no lock; `true` when more wait.
    private func runJobs() -> Bool {
        for _ in 0..<Self.jobBatch {
            guard let job = stateLock.withLock({ jobs.popFirst() }) else { return false }
            job.run()
        }
        return stateLock.withLock { !jobs.isEmpty }
    }

    /// What the loop thread does after a pass.
    private enum LoopStep {
        /// Sleeps in epoll for this many milliseconds (0: looks again at once).
        case sleep(Int32)
        /// Runs a batch of Swift jobs (``enqueueJob(_:fallback:)``), then passes again.
        case runJobs
        /// Ends: nothing ran for ``idleLinger``; the next `submit` starts a new thread.
        case end
        /// Ends after cleaning up: the session shut the loop down.
        case stop
    }

    /// Fails what still runs, cleans up the multi handle and abandons queued commands: by the loop
    /// thread when it stops, or by `shutDown` when no thread runs. Once only.
    private func cleanUp() {
        driveLock.withLock {
            guard !closed else { return }
            for transfer in active.values {
                curl_multi_remove_handle(multi, transfer.easy)
                transfer.finish(result: CURLE_ABORTED_BY_CALLBACK)
            }
            active.removeAll()
            let stranded = Array(clients.values)
            for socket in clients.keys { poller.unwatch(socket) }
            clients.removeAll()
            for client in stranded { client.loopDidStop() }
            curl_multi_cleanup(multi)
            closed = true
            httpHandles.close()
            let leftover: [Command] = stateLock.withLock {
                defer { commands.removeAll() }
                jobs.close()
                return commands
            }
            abandon(leftover)
        }
    }

    /// Whether the sleeping loop thread would wake later than `milliseconds` from now.
    private func sleepsPast(milliseconds: Int) -> Bool {
        let due = monotonicNanoseconds() &+ UInt64(milliseconds) * 1_000_000
        return stateLock.withLock { loopSleepsUntil != 0 && loopSleepsUntil > due }
    }

    // MARK: libcurl (drive lock held)

    /// libcurl's socket callback: what to watch on `socket`.
    fileprivate func watch(_ socket: Int32, what: Int32) {
        switch what {
        case CURL_POLL_IN: poller.watch(socket, readable: true, writable: false)
        case CURL_POLL_OUT: poller.watch(socket, readable: false, writable: true)
        case CURL_POLL_INOUT: poller.watch(socket, readable: true, writable: true)
        default: poller.unwatch(socket)
        }
    }
}

private let curlSocketCallback: @convention(c) (UnsafeMutableRawPointer?, curl_socket_t, Int32, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Int32 = { _, socket, what, loop, _ in
    guard let loop else { return 0 }
    Unmanaged<CurlMultiLoop>.fromOpaque(loop).takeUnretainedValue().watch(socket, what: what)
    return 0
}
