internal import CSSH2
import Foundation

/// Writes one remote file from an upload body (bytes, a file or a stream), reporting
/// `didSendBodyData` as the server acknowledges writes, and — with
/// ``URLRequest/sftpResumesUpload`` — continuing a file an interrupted upload left behind.
///
/// ``windowSize`` bytes are handed to `libssh2_sftp_write` at a time; libssh2 splits them into
/// WRITE requests of 30,000 bytes and sends as many as the channel window allows before waiting for
/// acknowledgements, so 64 requests are in flight as with OpenSSH's client. The response (no body)
/// is reported once the server has closed the file, so a write error reported at close fails the
/// upload.
///
/// libssh2 wants the unacknowledged bytes again, contiguous and from the first one, on every call,
/// and acknowledges about one request per call. The buffer is therefore twice the window: acknowledged
/// bytes are dropped from its front by moving an index, and the rest is moved to the front only when
/// the end is reached — about once per window, not once per acknowledgement.
final class SFTPUpload: SFTPJob, @unchecked Sendable {
    /// Bytes kept in flight.
    static let windowSize = 30_000 * 64
    /// The buffer's size.
    static let bufferCapacity = 2 * windowSize

    private enum Phase {
        case stat
        case open
        case write
        case close
        case done
    }

    private let body: SFTPUploadBody
    private var phase: Phase
    private var buffer: UnsafeMutableRawPointer?
    private var bufferStart = 0
    private var bufferCount = 0
    private var bodyEnded = false
    /// Body bytes still to skip because the server already has them.
    private var skip: Int64 = 0
    private var offset: Int64 = 0
    /// Bytes the server acknowledged, counting those skipped.
    private var sent: Int64 = 0

    init(url: URL, path: String, key: SSHConnectionKey, handler: SFTPURLProtocol, body: SFTPUploadBody, resumes: Bool) {
        self.body = body
        phase = resumes ? .stat : .open
        super.init(url: url, path: path, key: key, handler: handler)
    }

    deinit {
        free(buffer)
        body.close()
    }

    override func discard() {
        body.close()
    }

    private var expected: Int64 { body.length ?? NSURLSessionTransferSizeUnknown }

    override func step(sftp: OpaquePointer, session: OpaquePointer, isOutboundOwner: Bool) -> Step {
        switch phase {
        case .stat:
            if isCancelled { return finish(reusable: true) }
            if metrics.requestStart == nil { metrics.requestStart = Date() }
            var attributes = LIBSSH2_SFTP_ATTRIBUTES()
            let result = courier_ssh2_sftp_stat(sftp, path, &attributes)
            if result == LIBSSH2_ERROR_EAGAIN { return .blocked }
            if result < 0 && result != LIBSSH2_ERROR_SFTP_PROTOCOL { return .sessionFailed(result) }
            if result == 0, Int32(truncatingIfNeeded: attributes.flags) & LIBSSH2_SFTP_ATTR_SIZE != 0 {
                let remote = Int64(clamping: attributes.filesize)
                if body.length.map({ remote <= $0 }) ?? true { offset = remote }
            }
            phase = .open
            return .progressed
        case .open:
            return open(sftp: sftp, session: session)
        case .write:
            return write(sftp: sftp, isOutboundOwner: isOutboundOwner)
        case .close:
            guard let handle else { return finish(reusable: true) }
            let result = libssh2_sftp_close_handle(handle)
            if result == LIBSSH2_ERROR_EAGAIN { return .blocked }
            self.handle = nil
            if result == LIBSSH2_ERROR_SFTP_PROTOCOL {
                fail(SFTPErrorMapping.statusError(libssh2_sftp_last_error(sftp), operation: .write, path: path, url: url))
                return finish(reusable: true)
            }
            if result < 0 { return .sessionFailed(result) }
            metrics.responseStart = Date()
            metrics.bytesSent = sent - offset
            reporter?.jobDidReceive(URLResponse(url: url, mimeType: nil, expectedContentLength: 0, textEncodingName: nil))
            succeed()
            return finish(reusable: true)
        case .done:
            return .finished(reusable: true)
        }
    }

    private func open(sftp: OpaquePointer, session: OpaquePointer) -> Step {
        if isCancelled { return finish(reusable: true) }
        if metrics.requestStart == nil { metrics.requestStart = Date() }
        var flags = LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT
        if offset == 0 { flags |= LIBSSH2_FXF_TRUNC }
        guard let opened = courier_ssh2_sftp_open(sftp, path, UInt(flags), 0o644) else {
            let step = failedCall(libssh2_session_last_errno(session), sftp: sftp, operation: .write, cleanAfterStatus: true)
            if case .finished = step { phase = .done }
            return step
        }
        handle = opened
        hasStarted = true
        guard let allocated = malloc(Self.bufferCapacity) else {
            fail(URLError(.cannotLoadFromNetwork, url: url, description: "Out of memory uploading \(path)."))
            phase = .close
            return .progressed
        }
        buffer = allocated
        if offset > 0 {
            libssh2_sftp_seek64(opened, UInt64(offset))
            skip = offset
            sent = offset
            reporter?.jobDidSendBodyData(offset, totalBytesSent: offset, totalBytesExpectedToSend: expected)
        }
        phase = .write
        return .progressed
    }

    private func write(sftp: OpaquePointer, isOutboundOwner: Bool) -> Step {
        guard let handle, let buffer else { return retire() }
        if isCancelled && !isOutboundOwner { return retire() }
        if !isCancelled, let failure = refill(buffer) {
            fail(failure)
            return retire()
        }
        guard bufferCount > 0 else {
            if bodyEnded {
                if skip > 0 {
                    fail(URLError(.cannotWriteToFile, url: url,
                                  description: "The upload body is shorter than the part of \(path) already on the server."))
                    phase = .close
                    return .progressed
                }
                phase = .close
                return .progressed
            }
            return .idle
        }
        let written = libssh2_sftp_write(handle, (buffer + bufferStart).assumingMemoryBound(to: CChar.self), bufferCount)
        if written == Int(LIBSSH2_ERROR_EAGAIN) || written == 0 { return .blocked }
        if written < 0 {
            let step = failedCall(Int32(truncatingIfNeeded: written), sftp: sftp, operation: .write, cleanAfterStatus: false)
            if case .finished = step { return retire() }
            return step
        }
        bufferStart += written
        bufferCount -= written
        sent += Int64(written)
        reporter?.jobDidSendBodyData(Int64(written), totalBytesSent: sent, totalBytesExpectedToSend: expected)
        return .progressed
    }

    /// Tops the buffer up from the body (skipping what the server already has); the body's error,
    /// if reading it failed.
    private func refill(_ buffer: UnsafeMutableRawPointer) -> URLError? {
        while skip > 0 {
            // The skipped bytes land in the free space and are dropped (the buffer is empty then).
            switch body.take(into: buffer, count: Int(min(skip, Int64(Self.bufferCapacity)))) {
            case .bytes(let count): skip -= Int64(count)
            case .wait: return nil
            case .end:
                bodyEnded = true
                return nil
            case .failed(let error): return error
            }
        }
        // Top up only when a request's worth is missing, so each call adds whole requests.
        while !bodyEnded && Self.windowSize - bufferCount >= 30_000 {
            let wanted = Self.windowSize - bufferCount
            if bufferStart + bufferCount + wanted > Self.bufferCapacity {
                memmove(buffer, buffer + bufferStart, bufferCount)
                bufferStart = 0
            }
            switch body.take(into: buffer + bufferStart + bufferCount, count: wanted) {
            case .bytes(let count): bufferCount += count
            case .wait: return nil
            case .end: bodyEnded = true
            case .failed(let error): return error
            }
        }
        return nil
    }

    private func finish(reusable: Bool) -> Step {
        phase = .done
        body.close()
        return .finished(reusable: reusable)
    }

    /// Over mid-transfer (cancelled or failed): the channel is closed rather than reused, since
    /// libssh2 may have half-sent WRITE requests on it. The channel closes the handle first.
    private func retire() -> Step {
        return finish(reusable: false)
    }
}
