internal import CCurl
import Foundation

/// One libcurl multi handle and the thread that drives it: every http(s) and ftp transfer of a
/// session runs here, so thousands of transfers need one thread, and connections (and HTTP/2
/// streams) are shared between the session's tasks.
///
/// Other threads never touch the multi handle: they queue a command and wake the loop with
/// `curl_multi_wakeup`. The loop adds and removes easy handles, unpauses them, runs
/// `curl_multi_perform`, reports finished transfers and sleeps in `curl_multi_poll`.
final class CurlMultiLoop: HandlerSessionResource, @unchecked Sendable {
    private enum Command {
        case add(CurlTransfer)
        case remove(CurlTransfer)
        case unpause(CurlTransfer)
    }

    /// The key under which a session keeps its loop.
    static let resourceKey = "curl.multi"

    private let multi: UnsafeMutableRawPointer
    private let lock = Lock()
    private var commands: [Command] = []
    private var stopping = false
    /// Transfers added to the multi handle, by easy handle address. Touched on the loop thread only.
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]

    /// A loop with a new multi handle; `nil` if libcurl cannot make one.
    init?(maximumConnectionsPerHost: Int) {
        guard CurlGlobal.isInitialized, let multi = curl_multi_init() else { return nil }
        self.multi = multi
        _ = courier_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        if maximumConnectionsPerHost > 0 {
            _ = courier_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, maximumConnectionsPerHost)
        }
        // Keep idle connections for reuse: without this libcurl keeps only 4 per running transfer
        // and reconnects whenever fewer transfers run.
        _ = courier_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(4 * maximumConnectionsPerHost, 64))
        let thread = Thread { [self] in run() }
        thread.name = "courier.curl"
        thread.start()
    }

    /// The session's loop, created on first use.
    static func shared(in environment: HandlerEnvironment) -> CurlMultiLoop? {
        environment.resources.resource(resourceKey) {
            CurlMultiLoop(maximumConnectionsPerHost: environment.maximumConnectionsPerHost)
        }
    }

    /// Starts `transfer`.
    func add(_ transfer: CurlTransfer) { submit(.add(transfer)) }

    /// Stops `transfer`; it reports nothing more.
    func remove(_ transfer: CurlTransfer) { submit(.remove(transfer)) }

    /// Continues a transfer paused by its write callback.
    func unpause(_ transfer: CurlTransfer) { submit(.unpause(transfer)) }

    func shutDown() {
        lock.withLock { stopping = true }
        curl_multi_wakeup(multi)
    }

    private func submit(_ command: Command) {
        let accepted: Bool = lock.withLock {
            if stopping { return false }
            commands.append(command)
            return true
        }
        if accepted {
            curl_multi_wakeup(multi)
        } else if case .add(let transfer) = command {
            transfer.finish(result: CURLE_ABORTED_BY_CALLBACK)
        }
    }

    private func run() {
        var running: Int32 = 0
        while true {
            let (pending, stop): ([Command], Bool) = lock.withLock {
                defer { commands.removeAll(keepingCapacity: true) }
                return (commands, stopping)
            }
            if stop { break }
            for command in pending { apply(command) }
            _ = curl_multi_perform(multi, &running)
            collectFinished()
            if !active.isEmpty || running > 0 {
                _ = curl_multi_poll(multi, nil, 0, 1000, nil)
            } else {
                _ = curl_multi_poll(multi, nil, 0, 10_000, nil)
            }
        }
        for transfer in active.values {
            curl_multi_remove_handle(multi, transfer.easy)
            transfer.finish(result: CURLE_ABORTED_BY_CALLBACK)
        }
        active.removeAll()
        curl_multi_cleanup(multi)
    }

    private func apply(_ command: Command) {
        switch command {
        case .add(let transfer):
            let key = transfer.easy
            guard active[key] == nil else { return }
            if curl_multi_add_handle(multi, transfer.easy) == CURLM_OK {
                active[key] = transfer
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
        }
    }

    private func collectFinished() {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            var result = CURLE_OK
            guard let easy = courier_multi_done_handle(message, &result) else { continue }
            let key = easy
            guard let transfer = active.removeValue(forKey: key) else { continue }
            curl_multi_remove_handle(multi, easy)
            transfer.finish(result: result)
        }
    }
}
