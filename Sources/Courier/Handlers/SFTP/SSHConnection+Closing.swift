internal import CSSH2
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
/// Closing an SSH connection: failing or handing back its jobs, closing channels and their SFTP
/// handles, and freeing the libssh2 session once the socket is shut down.
extension SSHConnection {
    // MARK: Closing

    /// Stops taking jobs and closes: jobs still running fail with `error` (or a lost connection).
    func beginClosing(failing error: URLError?) {
        guard phase != .closing && phase != .closed else { return }
        let remaining = waiting + channels.compactMap(\.job)
        waiting = []
        for job in remaining {
            job.connection = nil
            job.fail(error.map { URLError($0.code, url: job.url, description: $0.localizedDescription) }
                ?? URLError(.networkConnectionLost, url: job.url, description: "The SSH connection was closed."))
            job.discard()
        }
        // Idle and closing channels are shut down properly (within the deadline); busy ones go with
        // the session.
        closingChannels = channels.filter { $0.isIdle || $0.isClosing }
        for channel in closingChannels { channel.close() }
        drop(channels.filter { !$0.isIdle && !$0.isClosing })
        channels = []
        challengeOwner = nil
        phase = .closing
        closeDeadline = Date().addingTimeInterval(2)
        if session == nil { finishClosing() }
    }

    func stepClosing(now: Date) {
        guard let session else {
            finishClosing()
            return
        }
        if outboundOwner == nil, let closeDeadline, now < closeDeadline {
            while let channel = closingChannels.first {
                if case .blocked = channel.step(session: session, isOutboundOwner: true) { return }
                closingChannels.removeFirst()
            }
            let result = courier_ssh2_session_disconnect(session, "Courier closes the connection")
            if result == LIBSSH2_ERROR_EAGAIN { return }
        }
        finishClosing()
    }

    private func finishClosing() {
        // The agent (inside the authentication) uses the session's allocator: it goes first.
        authentication = nil
        drop(closingChannels)
        closingChannels = []
        if fd >= 0 { _ = shutdown(fd, Int32(SHUT_RDWR)) }
        if session != nil { releaseDropped() }
        droppedHandles = []
        droppedSFTP = []
        if let session {
            courier_ssh2_set_kbdint_password(session, nil)
            // The socket is shut down, so freeing cannot wait on the network.
            var attempts = 0
            while libssh2_session_free(session) == LIBSSH2_ERROR_EAGAIN && attempts < 100 { attempts += 1 }
            self.session = nil
        }
        if fd >= 0 {
            Glibc.close(fd)
            fd = -1
        }
        outboundOwner = nil
        phase = .closed
    }

    /// Takes over what libssh2 holds for channels the connection drops without shutting them down.
    func drop(_ dropped: [SFTPChannel]) {
        for channel in dropped {
            let (handles, sftp) = channel.abandon()
            droppedHandles += handles
            if let sftp { droppedSFTP.append(sftp) }
        }
    }

    /// libssh2 frees a file handle (with its requests in flight) only when it is closed, and an SFTP
    /// session's leftovers only when it is shut down, neither when the SSH session is freed. With the
    /// socket shut down, both calls fail at once and free what they hold all the same.
    private func releaseDropped() {
        for handle in droppedHandles {
            var attempts = 0
            while libssh2_sftp_close_handle(handle) == LIBSSH2_ERROR_EAGAIN && attempts < 100 { attempts += 1 }
        }
        for sftp in droppedSFTP {
            var attempts = 0
            while libssh2_sftp_shutdown(sftp) == LIBSSH2_ERROR_EAGAIN && attempts < 100 { attempts += 1 }
        }
    }

    /// Closes the connection when it is set up and runs no job.
    func closeIfIdle() {
        guard phase == .ready, waiting.isEmpty, !channels.contains(where: { $0.job != nil }) else { return }
        beginClosing(failing: nil)
    }

    /// The session is going away: every job ends as cancelled, the connection closes at once.
    func shutDown() {
        let jobs = waiting + channels.compactMap(\.job)
        waiting = []
        for job in jobs {
            job.fail(URLError(.cancelled, url: job.url, description: "The session was invalidated."))
            job.discard()
        }
        drop(channels)
        channels = []
        phase = .closing
        closeDeadline = Date()
        finishClosing()
    }
}
