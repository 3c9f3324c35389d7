internal import CSSH2
import Foundation

/// One sftp load (a download, an upload or a directory listing) as the event loop drives it: a
/// state machine stepped on its channel until it is over, reporting to its handler.
///
/// Subclasses implement ``step(sftp:session:isOutboundOwner:)``. Everything here runs on the
/// event-loop thread; the handler is called from there (its client may be called from any thread).
class SFTPJob: @unchecked Sendable {
    /// What one step did.
    enum Step {
        /// Useful work was done: step again soon.
        case progressed
        /// A libssh2 call would block: step again when the socket is ready.
        case blocked
        /// Waiting for something other than the socket (the consumer, the upload body).
        case idle
        /// The job is over. `reusable`: the channel is in a clean state for another job.
        case finished(reusable: Bool)
        /// The session failed (a `LIBSSH2_ERROR_…` code): the whole connection is lost.
        case sessionFailed(Int32)
    }

    let url: URL
    /// The path on the server.
    let path: String
    let key: SSHConnectionKey
    private weak var handler: SFTPURLProtocol?
    /// Whether the task stopped the load; the job then only cleans up, reporting nothing.
    private(set) var isCancelled = false
    /// Whether the outcome (success or failure) was reported.
    private(set) var isOver = false
    /// Set once the job touched the server's files: it can no longer be retried elsewhere.
    var hasStarted = false
    /// The connection the job waits or runs on (event-loop thread).
    weak var connection: SSHConnection?
    /// Set when a lost, reused connection sent the job to a new one (it is retried once).
    var retriedOnNewConnection = false
    var metrics = SFTPTransferMetrics()
    /// The file or directory handle the job has open. One still open when the job ends (given up
    /// mid-transfer) is closed by its channel, or by the connection that drops the channel: libssh2
    /// frees a handle, with the requests it still has in flight (up to 2 MiB of an upload's
    /// writes), only in `libssh2_sftp_close_handle`, not in `libssh2_sftp_shutdown`.
    var handle: OpaquePointer?

    /// How long a connection made for this job may take to set up (its load's idle timeout).
    let setupTimeout: TimeInterval

    init(url: URL, path: String, key: SSHConnectionKey, handler: SFTPURLProtocol) {
        self.url = url
        self.path = path
        self.key = key
        self.handler = handler
        setupTimeout = handler.setupTimeout
    }

    /// Advances the job on its channel. `isOutboundOwner`: the last call on the session was this
    /// job's and left data unsent, so it must repeat that call now (even when paused or cancelled).
    func step(sftp: OpaquePointer, session: OpaquePointer, isOutboundOwner: Bool) -> Step {
        .finished(reusable: true)
    }

    /// The task stopped the load. Subclasses finish their current call and clean up.
    func cancel() {
        isCancelled = true
    }

    /// Releases what the job holds outside libssh2 (an upload's body stream) when it is dropped.
    func discard() {}

    /// Whether the consumer takes more data now (`false`: pause until `resumeProducing`).
    var canAcceptMoreData: Bool {
        handler?.canAcceptMoreDataFromJob ?? false
    }

    /// The handler to report to, unless the load was stopped or is over.
    var reporter: SFTPURLProtocol? {
        isCancelled || isOver ? nil : handler
    }

    /// The handler, for presenting a challenge on behalf of the connection.
    var challengePresenter: SFTPURLProtocol? {
        isCancelled ? nil : handler
    }

    /// Reports success (once).
    func succeed() {
        guard !isOver else { return }
        let handler = reporter
        isOver = true
        metrics.responseEnd = Date()
        let measured = metrics
        handler?.jobDidCollect(measured)
        handler?.jobDidFinish()
    }

    /// Reports a failure (once).
    func fail(_ error: URLError) {
        guard !isOver else { return }
        let handler = reporter
        isOver = true
        metrics.responseEnd = Date()
        let measured = metrics
        handler?.jobDidCollect(measured)
        handler?.jobDidFail(error)
    }

    /// The step after a libssh2 call on the channel failed with `code`: wait on EAGAIN, report an
    /// SFTP status as `operation`'s error (the channel stays usable when `cleanAfterStatus`), or
    /// lose the session.
    func failedCall(_ code: Int32, sftp: OpaquePointer, operation: SFTPErrorMapping.Operation,
                    cleanAfterStatus: Bool) -> Step {
        if code == LIBSSH2_ERROR_EAGAIN { return .blocked }
        if code == LIBSSH2_ERROR_SFTP_PROTOCOL {
            fail(SFTPErrorMapping.statusError(libssh2_sftp_last_error(sftp), operation: operation, path: path, url: url))
            return .finished(reusable: cleanAfterStatus)
        }
        return .sessionFailed(code)
    }
}
