internal import CSSH2
import Foundation

/// Reads one remote file: opens it, reports a response (size, MIME type from the name), continues
/// at a resume offset when the file is unchanged, and streams the body.
///
/// Each read asks libssh2 for ``readSize`` bytes. libssh2 keeps up to four times the buffer it is
/// given in flight as READ requests of at most 30,000 bytes, so 16 × 30,000 bytes here means 64
/// requests (1.92 MB) outstanding — what OpenSSH's own client keeps (64 × 32 KiB). While the
/// consumer lags the job stops reading (the requests already sent still arrive, bounded by that
/// window) until the handler is told to resume.
final class SFTPDownload: SFTPJob, @unchecked Sendable {
    /// Bytes per `libssh2_sftp_read` call.
    static let readSize = 30_000 * 16

    private enum Phase {
        case open
        case stat
        case read
        case close
        case done
    }

    private var phase = Phase.open
    /// The last read would have blocked: it must be repeated before the handle can be closed.
    private var readPending = false
    private let resume: (offset: Int64, validator: String?)?
    /// The start offset of the request's `Range: bytes=N-` header (``RangeStartOffset``).
    private let rangeStart: Int64?

    init(url: URL, path: String, key: SSHConnectionKey, handler: SFTPURLProtocol, resume: (offset: Int64, validator: String?)?,
         rangeStart: Int64? = nil) {
        self.resume = resume
        self.rangeStart = rangeStart
        super.init(url: url, path: path, key: key, handler: handler)
    }

    override func step(sftp: OpaquePointer, session: OpaquePointer, isOutboundOwner: Bool) -> Step {
        switch phase {
        case .open:
            if isCancelled { return finish(reusable: true) }
            if metrics.requestStart == nil { metrics.requestStart = Date() }
            guard let opened = courier_ssh2_sftp_open(sftp, path, UInt(LIBSSH2_FXF_READ), 0) else {
                let code = libssh2_session_last_errno(session)
                return ended(failedCall(code, sftp: sftp, operation: .read, cleanAfterStatus: true))
            }
            handle = opened
            hasStarted = true
            phase = .stat
            return .progressed
        case .stat:
            return stat(sftp: sftp)
        case .read:
            return read(sftp: sftp, isOutboundOwner: isOutboundOwner)
        case .close:
            guard let handle else { return finish(reusable: true) }
            let result = libssh2_sftp_close_handle(handle)
            if result == LIBSSH2_ERROR_EAGAIN { return .blocked }
            self.handle = nil
            if result < 0 && result != LIBSSH2_ERROR_SFTP_PROTOCOL { return .sessionFailed(result) }
            return finish(reusable: true)
        case .done:
            return .finished(reusable: true)
        }
    }

    private func stat(sftp: OpaquePointer) -> Step {
        guard let handle else { return finish(reusable: true) }
        var attributes = LIBSSH2_SFTP_ATTRIBUTES()
        let result = courier_ssh2_sftp_fstat(handle, &attributes)
        if result == LIBSSH2_ERROR_EAGAIN { return .blocked }
        if result < 0 {
            let step = failedCall(result, sftp: sftp, operation: .read, cleanAfterStatus: true)
            if case .finished = step { phase = .close; return .progressed }
            return step
        }
        if isCancelled {
            phase = .close
            return .progressed
        }
        let flags = Int32(truncatingIfNeeded: attributes.flags)
        if flags & LIBSSH2_SFTP_ATTR_PERMISSIONS != 0,
           Int32(truncatingIfNeeded: attributes.permissions) & LIBSSH2_SFTP_S_IFMT == LIBSSH2_SFTP_S_IFDIR {
            fail(URLError(.fileIsDirectory, url: url,
                          description: "\(path) is a directory; list it with a URL ending in \"/\"."))
            phase = .close
            return .progressed
        }
        let size: Int64? = flags & LIBSSH2_SFTP_ATTR_SIZE != 0 ? Int64(clamping: attributes.filesize) : nil
        let modified: UInt? = flags & LIBSSH2_SFTP_ATTR_ACMODTIME != 0 ? attributes.mtime : nil
        let reporter = self.reporter
        var expectedLength = size
        if let start = rangeStart {
            if let size, start > size {
                fail(RangeStartOffset.pastTheEnd(start, size: size, url: url))
                phase = .close
                return .progressed
            }
            libssh2_sftp_seek64(handle, UInt64(start))
            expectedLength = size.map { $0 - start }
        } else if let size, let modified {
            let validator = "sftp:\(size)-\(modified)"
            reporter?.jobSetResumeValidator(validator)
            if let resume, resume.validator == validator, resume.offset <= size {
                libssh2_sftp_seek64(handle, UInt64(resume.offset))
                reporter?.jobDidResume(atOffset: resume.offset, expectedTotalBytes: size)
            }
        }
        let mimeType = MIMETypeTable.mimeType(forPathExtension: url.pathExtension)
        let response = URLResponse(url: url, mimeType: mimeType, expectedContentLength: expectedLength.map { Int($0) } ?? -1,
                                   textEncodingName: MIMETypeTable.textEncodingName(forMIMEType: mimeType))
        metrics.responseStart = Date()
        reporter?.jobDidReceive(response)
        phase = .read
        return .progressed
    }

    private func read(sftp: OpaquePointer, isOutboundOwner: Bool) -> Step {
        guard let handle else { return finish(reusable: true) }
        if isCancelled && !readPending && !isOutboundOwner {
            phase = .close
            return .progressed
        }
        if !isCancelled && !isOutboundOwner && !canAcceptMoreData { return .idle }
        guard let buffer = malloc(Self.readSize) else {
            fail(URLError(.cannotLoadFromNetwork, url: url, description: "Out of memory reading \(path)."))
            return retire()
        }
        let count = libssh2_sftp_read(handle, buffer.assumingMemoryBound(to: CChar.self), Self.readSize)
        if count == Int(LIBSSH2_ERROR_EAGAIN) {
            free(buffer)
            readPending = true
            return .blocked
        }
        readPending = false
        if count < 0 {
            free(buffer)
            let step = failedCall(Int32(truncatingIfNeeded: count), sftp: sftp, operation: .read, cleanAfterStatus: false)
            if case .finished = step { return retire() }
            return step
        }
        if count == 0 {
            free(buffer)
            succeed()
            phase = .close
            return .progressed
        }
        metrics.bytesReceived += Int64(count)
        guard let reporter else {
            free(buffer)
            return .progressed
        }
        // Shrinking in place is cheap, and keeps a short read from pinning a whole buffer.
        let trimmed = count < Self.readSize ? (realloc(buffer, count) ?? buffer) : buffer
        reporter.jobDidLoad(Data(bytesNoCopy: trimmed, count: count, deallocator: .free))
        return .progressed
    }

    /// Over, with the channel clean.
    private func finish(reusable: Bool) -> Step {
        phase = .done
        return .finished(reusable: reusable)
    }

    /// Over after an error mid-transfer: the channel is closed rather than reused (libssh2 may hold
    /// half-sent requests on it). The channel closes the handle first.
    private func retire() -> Step {
        phase = .done
        return .finished(reusable: false)
    }

    /// A failed open: the job is over and the channel clean; anything else passes through.
    private func ended(_ step: Step) -> Step {
        if case .finished = step { phase = .done }
        return step
    }
}
