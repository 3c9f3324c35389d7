import Foundation

/// A request body read by libcurl as it sends: bytes in memory or an `InputStream` (a file or the
/// app's stream). Nothing is copied up front, so a multi-GiB upload keeps memory flat.
final class CurlRequestBody: @unchecked Sendable {
    private enum Source {
        case data(Data, offset: Int)
        /// An upload task's file, opened by Courier (``UploadFileRequest``): read directly (a file
        /// does not block) and able to go back for a resend.
        case file(InputStream)
        /// An app's stream, read on the pump's thread.
        case stream(CurlBodyStreamPump)
    }

    private var source: Source
    /// The length when known; `nil` sends chunked (HTTP/1.1) or unsized (HTTP/2).
    let length: Int64?
    /// Body bytes handed to libcurl so far (without chunked-encoding framing).
    private(set) var bytesRead: Int64 = 0
    /// Set when the stream reported an error.
    private(set) var streamError: (any Error)?
    /// What libcurl's read callback answers to pause the upload until ``onReadable`` is called.
    static let pause = 0x1000_0001 // CURL_READFUNC_PAUSE
    private static let abort = 0x1000_0000 // CURL_READFUNC_ABORT

    init(data: Data) {
        source = .data(data, offset: 0)
        length = Int64(data.count)
    }

    /// A body read from an app's `stream` on a thread of its own (``CurlBodyStreamPump``), so that a
    /// slow or blocking stream never holds up the session's loop thread.
    init(stream: InputStream, length: Int64?) {
        source = .stream(CurlBodyStreamPump(stream: stream))
        self.length = length
    }

    /// A body read from `stream`, an upload task's file that Courier opened, on libcurl's thread.
    init(fileStream stream: InputStream, length: Int64?) {
        stream.open()
        source = .file(stream)
        self.length = length
    }

    /// Called, on another thread, when a body whose read answered ``pause`` can be read again (the
    /// transfer is to be unpaused). Bodies in memory never pause.
    var onReadable: (@Sendable () -> Void)? {
        get { if case .stream(let pump) = source { pump.onReadable } else { nil } }
        set { if case .stream(let pump) = source { pump.onReadable = newValue } }
    }

    /// The request's body (`httpBody`, else `httpBodyStream` with the `Content-Length` it declares),
    /// or `nil` when it has none.
    static func make(for request: URLRequest) -> CurlRequestBody? {
        if let data = request.httpBody { return CurlRequestBody(data: data) }
        guard let stream = request.httpBodyStream else { return nil }
        let length = request.value(forHTTPHeaderField: "Content-Length").flatMap { Int64($0) }
        if UploadFileRequest.streamsAFile(request) { return CurlRequestBody(fileStream: stream, length: length) }
        return CurlRequestBody(stream: stream, length: length)
    }

    deinit {
        switch source {
        case .data: break
        case .file(let stream): stream.close()
        case .stream(let pump): pump.cancel()
        }
    }

    /// Goes back (or forward) to `offset` from the body's start, so that libcurl can send the body
    /// again; `false` when the body cannot. Bytes in memory and an upload task's file can; an app's
    /// stream cannot, and a retry that needs it again asks the delegate for a new one
    /// (``CurlBodyStreamRetry``).
    func seek(to offset: Int64) -> Bool {
        guard offset >= 0 else { return false }
        switch source {
        case .data(let data, _):
            guard offset <= Int64(data.count) else { return false }
            source = .data(data, offset: Int(offset))
        case .file(let stream):
            guard length.map({ offset <= $0 }) ?? true,
                  stream.streamStatus == .open || stream.streamStatus == .reading,
                  stream.setProperty(NSNumber(value: offset), forKey: .fileCurrentOffsetKey) else { return false }
        case .stream:
            return false
        }
        bytesRead = offset
        return true
    }

    /// Fills `buffer`; 0 at the end; ``pause`` when an app's stream has nothing buffered yet;
    /// `CURL_READFUNC_ABORT` on a stream error.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        switch source {
        case .data(let data, let offset):
            let count = min(buffer.count, data.count - offset)
            guard count > 0 else { return 0 }
            data.withUnsafeBytes { raw in
                if let start = raw.baseAddress { base.copyMemory(from: start + offset, byteCount: count) }
            }
            source = .data(data, offset: offset + count)
            bytesRead += Int64(count)
            return count
        case .stream(let pump):
            switch pump.take(into: buffer) {
            case .bytes(let count):
                bytesRead += Int64(count)
                return count
            case .wouldBlock:
                return Self.pause
            case .end:
                return 0
            case .failed:
                streamError = pump.streamError
                return Self.abort
            }
        case .file(let stream):
            var count = buffer.count
            if let length {
                // Never read past the declared length, so a file stream does not reach its end
                // and can still go back (``seek(to:)``).
                guard bytesRead < length else { return 0 }
                count = Int(min(Int64(count), length - bytesRead))
            }
            let read = stream.read(base.assumingMemoryBound(to: UInt8.self), maxLength: count)
            if read < 0 {
                // Reading `streamError` of a stream that failed without one traps in Foundation, so
                // the status is checked first.
                if stream.streamStatus == .error { streamError = stream.streamError }
                return Self.abort
            }
            bytesRead += Int64(read)
            return read
        }
    }
}
