internal import CSSH2
import Foundation

/// One SFTP subsystem channel on an SSH connection, serving one job at a time.
///
/// libssh2 keeps the state of an SFTP operation that would block (open, read, readdir, …) in the
/// SFTP session, not in the file handle, so two transfers cannot share one SFTP session when
/// calls are interleaved without blocking. Courier therefore gives every concurrent transfer its
/// own channel (sshd allows ten per connection by default); channels are reused for later jobs.
/// Used on the event-loop thread only.
final class SFTPChannel: @unchecked Sendable {
    enum State {
        case opening
        case idle(since: Date)
        case busy(SFTPJob)
        case closing
        case closed
    }

    enum Step {
        case blocked
        case progressed
        case idle
        /// The channel finished opening and is idle.
        case opened
        /// The job is over; the channel is idle again or closing.
        case jobEnded(SFTPJob)
        case closed
        /// A session-level libssh2 error (the `LIBSSH2_ERROR_…` code).
        case sessionFailed(Int32)
    }

    private(set) var sftp: OpaquePointer?
    private(set) var state = State.opening
    /// Handles of jobs that ended mid-transfer, closed before the channel shuts down.
    private var handlesToClose: [OpaquePointer] = []

    var job: SFTPJob? {
        if case .busy(let job) = state { return job }
        return nil
    }

    var isIdle: Bool {
        if case .idle = state { return true }
        return false
    }

    var isClosing: Bool {
        if case .closing = state { return true }
        return false
    }

    var isOpening: Bool {
        if case .opening = state { return true }
        return false
    }

    /// Gives an idle channel a job.
    func assign(_ job: SFTPJob) {
        state = .busy(job)
    }

    /// Closes the channel once its current call allows (an idle channel at once).
    func close() {
        switch state {
        case .opening, .idle: state = sftp == nil ? .closed : .closing
        case .busy, .closing, .closed: break
        }
    }

    /// Hands what libssh2 still holds for the channel — the handles open on it (its job's, and those
    /// it has yet to close) and its SFTP session — to a connection that drops the channel, which
    /// releases them once its socket is shut down. The channel is closed afterwards.
    func abandon() -> (handles: [OpaquePointer], sftp: OpaquePointer?) {
        var handles = handlesToClose
        handlesToClose = []
        if let job, let handle = job.handle {
            handles.append(handle)
            job.handle = nil
        }
        let abandoned = sftp
        sftp = nil
        state = .closed
        return (handles, abandoned)
    }

    /// Advances whatever the channel is doing. `isOutboundOwner`: the last call on the session was
    /// this channel's and left data unsent, so the same call must be repeated now.
    func step(session: OpaquePointer, isOutboundOwner: Bool) -> Step {
        switch state {
        case .opening:
            guard let opened = libssh2_sftp_init(session) else {
                let code = libssh2_session_last_errno(session)
                return code == LIBSSH2_ERROR_EAGAIN ? .blocked : .sessionFailed(code)
            }
            sftp = opened
            state = .idle(since: Date())
            return .opened
        case .idle, .closed:
            return .idle
        case .busy(let job):
            guard let sftp else { return .sessionFailed(LIBSSH2_ERROR_BAD_USE) }
            switch job.step(sftp: sftp, session: session, isOutboundOwner: isOutboundOwner) {
            case .progressed: return .progressed
            case .blocked: return .blocked
            case .idle: return .idle
            case .finished(let reusable):
                if let handle = job.handle {
                    handlesToClose.append(handle)
                    job.handle = nil
                }
                state = reusable && handlesToClose.isEmpty ? .idle(since: Date()) : .closing
                return .jobEnded(job)
            case .sessionFailed(let code):
                return .sessionFailed(code)
            }
        case .closing:
            guard let sftp else {
                state = .closed
                return .closed
            }
            // libssh2 frees a handle (and its requests in flight) whatever the server answers to
            // the close; only a call that would block keeps it, to be repeated.
            while let handle = handlesToClose.last {
                if libssh2_sftp_close_handle(handle) == LIBSSH2_ERROR_EAGAIN { return .blocked }
                handlesToClose.removeLast()
            }
            let result = libssh2_sftp_shutdown(sftp)
            if result == LIBSSH2_ERROR_EAGAIN { return .blocked }
            self.sftp = nil
            state = .closed
            return .closed
        }
    }
}
