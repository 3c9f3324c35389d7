import Foundation

/// Reads a request body's `InputStream` on a thread of its own into a small bounded buffer, so that
/// libcurl's read callback, which runs on the session's loop thread, never blocks on the app's
/// stream.
///
/// An app's stream may be slow or may block: the read end of `Stream.getBoundStreams` waits until
/// the app writes more. Read directly on the loop thread, such a stream would stall every transfer
/// of the session (and a producer that waits for a delegate callback would wait for ever). Here the
/// read callback only takes what the pump has buffered; when nothing is there it pauses the upload
/// (`CURL_READFUNC_PAUSE`), and the pump calls ``onReadable`` once bytes, the end or an error
/// arrive, which unpauses the transfer on the loop.
///
/// Memory stays flat: the pump stops reading while ``capacity`` bytes wait for libcurl. A stream
/// that never returns from `read` keeps its pump thread until it does; the pump then drops what it
/// read and ends, and nothing else waits for it.
final class CurlBodyStreamPump: @unchecked Sendable {
    /// What the read callback gets.
    enum Chunk: Equatable {
        /// This many bytes were copied into the buffer.
        case bytes(Int)
        /// Nothing is buffered yet: pause and wait for ``onReadable``.
        case wouldBlock
        /// The stream ended.
        case end
        /// The stream failed.
        case failed
    }

    /// How many bytes the pump buffers ahead of libcurl at most.
    static let capacity = 1 << 20
    /// How much one `read` asks the stream for.
    private static let readSize = 256 << 10

    private let condition = NSCondition()
    // Guarded by `condition`:
    /// Chunks read and not yet taken, oldest first; `offset` bytes of the first are taken already.
    private var chunks: [Data] = []
    private var offset = 0
    private var bufferedCount = 0
    private var ended = false
    private var error: (any Error)?
    private var failed = false
    private var cancelled = false
    private var consumerWaits = false
    private var onReadableHandler: (@Sendable () -> Void)?
    private var started = false
    private let stream: UncheckedSendable<InputStream>

    /// A pump for `stream`. Its thread starts at the first ``take(into:)``, when libcurl first asks
    /// for body bytes: an attempt that ends before it sends its body (a TLS handshake that fails
    /// verification, a refused connection) leaves the stream untouched for the next attempt.
    init(stream: InputStream) {
        // The stream moves to the pump's thread, which alone uses it from then on.
        self.stream = UncheckedSendable(stream)
    }

    /// Called (on the pump's thread) when bytes, the end or an error arrive after ``take(into:)``
    /// answered `.wouldBlock`. Set it before the transfer starts.
    var onReadable: (@Sendable () -> Void)? {
        get { condition.withLock { onReadableHandler } }
        set { condition.withLock { onReadableHandler = newValue } }
    }

    /// The stream's error, once ``take(into:)`` answered `.failed`.
    var streamError: (any Error)? { condition.withLock { error } }

    /// Copies buffered bytes into `buffer` (never waits).
    func take(into buffer: UnsafeMutableRawBufferPointer) -> Chunk {
        condition.withLock {
            if !started, !cancelled {
                started = true
                NamedThread.start("courier.body") { [self, stream] in pump(stream.value) }
            }
            if let first = chunks.first, let base = buffer.baseAddress {
                let count = min(buffer.count, first.count - offset)
                first.withUnsafeBytes { raw in
                    if let start = raw.baseAddress { base.copyMemory(from: start + offset, byteCount: count) }
                }
                offset += count
                if offset == first.count {
                    chunks.removeFirst()
                    offset = 0
                }
                bufferedCount -= count
                condition.broadcast()
                return .bytes(count)
            }
            if failed { return .failed }
            if ended { return .end }
            consumerWaits = true
            return .wouldBlock
        }
    }

    /// Stops the pump: it reads no more and ends as soon as a pending `read` returns.
    func cancel() {
        condition.withLock {
            cancelled = true
            onReadableHandler = nil
            condition.broadcast()
        }
    }

    deinit { cancel() }

    // MARK: The pump's thread

    private func pump(_ stream: InputStream) {
        stream.open()
        defer { stream.close() }
        var chunk = [UInt8](repeating: 0, count: Self.readSize)
        while true {
            let proceed: Bool = condition.withLock {
                while !cancelled, bufferedCount >= Self.capacity { condition.wait() }
                return !cancelled
            }
            guard proceed else { return }
            let count = chunk.withUnsafeMutableBufferPointer { raw -> Int in
                guard let base = raw.baseAddress else { return -1 }
                return stream.read(base, maxLength: raw.count)
            }
            let notify: (@Sendable () -> Void)? = condition.withLock {
                if cancelled { return nil }
                if count > 0 {
                    chunks.append(Data(chunk[0..<count]))
                    bufferedCount += count
                } else if count == 0 {
                    ended = true
                } else {
                    failed = true
                    // Reading `streamError` of a stream that failed without one traps in
                    // Foundation, so the status is checked first.
                    if stream.streamStatus == .error { error = stream.streamError }
                }
                guard consumerWaits else { return nil }
                consumerWaits = false
                return onReadableHandler
            }
            notify?()
            if count <= 0 { return }
        }
    }
}
