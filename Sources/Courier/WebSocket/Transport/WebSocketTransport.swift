internal import CCurl
import Foundation

/// One WebSocket connection's socket, after libcurl opened it (`CURLOPT_CONNECT_ONLY`: proxy
/// tunnel and TLS done, see ``WebSocketConnector``): bytes go out with `curl_easy_send` and come in
/// with `curl_easy_recv`, non-blocking, driven by the socket's readiness on the session's libcurl
/// loop thread (``CurlLoopSocketClient``). No thread is made per connection.
///
/// A plain connection (ws: with no HTTP proxy tunnel: nothing between Courier and the TCP stream)
/// moves its bytes with `send(2)` and `recv(2)` on the socket instead (``StreamSocket``), which
/// saves libcurl's look-up of the connection on every call; and a read there that returns less
/// than it asked for ends the read pass (the socket is drained; epoll is level-triggered, so more
/// bytes wake the loop again), which saves the `recv` that would only find `EAGAIN`. Through TLS
/// the read goes on until `EAGAIN`: OpenSSL may hold bytes that epoll cannot see.
///
/// - Writes are queued in order; a write that the socket takes only in part keeps its rest at the
///   head of the queue until the socket is writable again. Each write's `written` closure runs once
///   all its bytes were handed to the socket (or with an error when the connection ended first).
///   A write from an app thread goes straight to the socket when nothing waits before it; on a
///   plain socket that `send(2)` runs outside the lock (writes made meanwhile queue behind it), so
///   the loop thread is not held up reading an answer that arrives while it runs.
/// - Reads happen only while reading is enabled (``setReading(_:order:)``): the owner turns it off when
///   its buffer of received messages is full, so a peer that sends faster than the app receives
///   fills the kernel's socket buffer, not Courier's memory.
/// - ``close()`` closes once the queued writes are out (bounded by ``closeLinger``); the easy handle
///   is cleaned up on the loop thread after the loop forgot the descriptor.
///
/// `lock` guards the easy handle and all state: libcurl's connection (an OpenSSL stream for wss)
/// is used by one thread at a time. The delegate is called after the lock is released. Lock order:
/// this lock, then ``CurlMultiLoop``'s state lock (a leaf). `watch` and `unwatch` are submitted
/// with the lock held: the loop never calls this transport back within those calls (a stopping loop
/// runs `loopDidStop` and the `unwatch` closure later, on another thread), so the lock is not taken
/// twice by one thread.
final class WebSocketTransport: CurlLoopSocketClient, @unchecked Sendable {
    /// How long ``close()`` waits for queued writes before it closes anyway.
    static let closeLinger: TimeInterval = 2
    /// The most bytes read in one pass before the loop gets to its other sockets.
    static let readPassLimit = 1 << 20
    /// The most bytes one `curl_easy_recv` takes, into a buffer that lives only for the pass: an
    /// idle connection holds no read buffer.
    static let readChunk = 64 * 1024

    private struct PendingWrite {
        var bytes: Data
        var offset = 0
        var written: (@Sendable (URLError?) -> Void)?
    }

    private enum Phase {
        case open
        /// ``close()`` was called; the socket closes once the queue is empty.
        case closing
        case closed
    }

    private let lock = Lock()
    /// The connected handle; `nil` once cleaned up. Guarded by `lock`.
    private var connection: WebSocketConnector.Connection?
    private let socket: Int32
    /// The socket for `send(2)` and `recv(2)` when the connection is plain; `nil`: through libcurl.
    private let plainSocket: StreamSocket?
    private let loop: CurlMultiLoop
    private let url: URL?
    private weak var delegate: (any WebSocketTransportDelegate)?
    private var phase = Phase.open
    private var queue: [PendingWrite] = []
    /// An app thread is writing to a plain socket outside the lock (``write(_:written:)``, with
    /// nothing queued): what is written meanwhile queues behind it, and nobody flushes or closes
    /// until it is done.
    private var directWrite = false
    private var reading = true
    /// The `order` of the last ``setReading(_:order:)`` applied.
    private var readingOrder = 0
    private var interest: (readable: Bool, writable: Bool) = (false, false)
    /// Bytes handed to the socket and read from it, for metrics and tests.
    private(set) var bytesSent: Int64 = 0
    private(set) var bytesReceived: Int64 = 0

    /// Takes over `connection` (connected, its socket known) and starts watching it on `loop`.
    /// `plain`: nothing but TCP lies between Courier and the peer (no TLS, no proxy tunnel), so the
    /// socket is read and written directly.
    init(connection: WebSocketConnector.Connection, socket: Int32, plain: Bool = false, loop: CurlMultiLoop, url: URL?,
         delegate: any WebSocketTransportDelegate) {
        self.connection = connection
        self.socket = socket
        plainSocket = plain ? StreamSocket(descriptor: socket) : nil
        self.loop = loop
        self.url = url
        self.delegate = delegate
        lock.withLock { updateInterestLocked() }
    }

    /// Hands the reads to another delegate (the task, after the handshake).
    func setDelegate(_ delegate: any WebSocketTransportDelegate) {
        lock.withLock { self.delegate = delegate }
    }

    /// Bytes the owner holds back from the socket: queued, not yet written.
    var queuedByteCount: Int {
        lock.withLock { queue.reduce(0) { $0 + $1.bytes.count - $1.offset } }
    }

    // MARK: Writing

    /// Queues `bytes` after everything written before; `written` runs once they were all handed to
    /// the socket, or with `networkConnectionLost` when the connection ended first (also when it
    /// had ended already).
    func write(_ bytes: Data, written: (@Sendable (URLError?) -> Void)? = nil) {
        enum Start { case finished([(@Sendable (URLError?) -> Void, URLError?)]), direct(StreamSocket, WebSocketConnector.Connection) }
        let start: Start = lock.withLock {
            guard case .open = phase else {
                return .finished(written.map { [($0, lostError())] } ?? [])
            }
            if let plainSocket, queue.isEmpty, !directWrite, let connection {
                directWrite = true
                return .direct(plainSocket, connection)
            }
            queue.append(PendingWrite(bytes: bytes, written: written))
            let done = flushLocked()
            updateInterestLocked()
            return .finished(done)
        }
        let finished: [(@Sendable (URLError?) -> Void, URLError?)]
        switch start {
        case .finished(let done):
            finished = done
        case .direct(let socket, let connection):
            // Outside the lock, so that the loop thread can read meanwhile; the connection (its
            // descriptor) stays alive until the call returns.
            let outcome = withExtendedLifetime(connection) { bytes.withUnsafeBytes { socket.write($0) } }
            finished = lock.withLock { directWriteEndedLocked(PendingWrite(bytes: bytes, written: written), outcome) }
        }
        for (callback, error) in finished { callback(error) }
    }

    /// A write made outside the lock returned `outcome`: its rest goes to the head of the queue
    /// (before what was queued meanwhile), or it completes; then the queue is flushed as usual.
    /// Call with the lock held.
    private func directWriteEndedLocked(_ write: PendingWrite,
                                        _ outcome: StreamSocket.Outcome) -> [(@Sendable (URLError?) -> Void, URLError?)] {
        directWrite = false
        var entry = write
        var done: [(@Sendable (URLError?) -> Void, URLError?)] = []
        switch outcome {
        case .bytes(let sent):
            bytesSent += Int64(sent)
            entry.offset = sent
        case .wouldBlock:
            break
        case .endOfStream, .failed:
            queue.insert(entry, at: 0)
            return failAllLocked()
        }
        if entry.offset < entry.bytes.count {
            queue.insert(entry, at: 0)
        } else if let written = entry.written {
            done.append((written, nil))
        }
        guard phase != .closed else { return done + failAllLocked() }
        done += flushLocked()
        closeIfFlushedLocked()
        updateInterestLocked()
        return done
    }

    /// Writes what the socket takes, in order; returns the callbacks of the writes completed (or
    /// failed, when the connection broke). Call with the lock held.
    private func flushLocked() -> [(@Sendable (URLError?) -> Void, URLError?)] {
        var done: [(@Sendable (URLError?) -> Void, URLError?)] = []
        guard let easy = connection?.easy else { return failAllLocked() }
        // A write in progress outside the lock goes first: the queue waits for it.
        guard !directWrite else { return done }
        while !queue.isEmpty {
            let outcome = queue[0].bytes.withUnsafeBytes { raw -> StreamSocket.Outcome in
                let rest = UnsafeRawBufferPointer(rebasing: raw[queue[0].offset...])
                guard !rest.isEmpty else { return .bytes(0) }
                return sendLocked(rest, easy: easy)
            }
            let sent: Int
            switch outcome {
            case .bytes(let count): sent = count
            case .wouldBlock: return done
            case .endOfStream, .failed: return done + failAllLocked()
            }
            bytesSent += Int64(sent)
            queue[0].offset += sent
            if queue[0].offset >= queue[0].bytes.count {
                let finished = queue.removeFirst()
                if let written = finished.written { done.append((written, nil)) }
            } else if sent == 0 {
                break
            }
        }
        return done
    }

    /// Hands what the socket takes of `bytes` (not empty) to it. Call with the lock held.
    private func sendLocked(_ bytes: UnsafeRawBufferPointer, easy: UnsafeMutableRawPointer) -> StreamSocket.Outcome {
        if let plainSocket { return plainSocket.write(bytes) }
        guard let base = bytes.baseAddress else { return .bytes(0) }
        var sent = 0
        let result = curl_easy_send(easy, base, bytes.count, &sent)
        if result == CURLE_AGAIN { return .wouldBlock }
        return result == CURLE_OK ? .bytes(sent) : .failed(0)
    }

    /// Fails every queued write (the connection ended). Call with the lock held.
    private func failAllLocked() -> [(@Sendable (URLError?) -> Void, URLError?)] {
        let error = lostError()
        defer { queue.removeAll() }
        return queue.compactMap { entry in entry.written.map { ($0, error) } }
    }

    private func lostError() -> URLError {
        URLError(.networkConnectionLost, url: url, description: "The WebSocket connection is closed.")
    }

    // MARK: Reading

    /// Turns reading on or off (back-pressure). Turning it on reads at once what may wait. `order`
    /// is the change's number (increasing): a change older than one applied already is ignored,
    /// since the owner's changes may arrive out of order from two threads.
    func setReading(_ enabled: Bool, order: Int) {
        let poke: Bool = lock.withLock {
            guard order > readingOrder else { return false }
            readingOrder = order
            guard reading != enabled else { return false }
            reading = enabled
            updateInterestLocked()
            return enabled && phase != .closed
        }
        if poke { loop.service(self) }
    }

    /// Whether bytes move with `send(2)`/`recv(2)` on the socket rather than through libcurl (a
    /// plain connection; tests).
    var usesSocketDirectly: Bool { plainSocket != nil }

    /// Whether the transport reads (``setReading(_:order:)``).
    var isReading: Bool { lock.withLock { reading } }

    // MARK: CurlLoopSocketClient (loop thread)

    /// Flushes queued writes when writable, reads when readable; a requested pass (neither) reads
    /// what a TLS layer may hold.
    func serviceSocket(on loop: CurlMultiLoop, readable: Bool, writable: Bool) {
        if writable {
            let finished = lock.withLock {
                let done = flushLocked()
                closeIfFlushedLocked()
                updateInterestLocked()
                return done
            }
            for (callback, error) in finished { callback(error) }
        }
        if readable || !writable { readAvailable() }
    }

    func loopDidStop() {
        let (delegate, failed): ((any WebSocketTransportDelegate)?, [(@Sendable (URLError?) -> Void, URLError?)]) = lock.withLock {
            let wasOpen = phase != .closed
            phase = .closed
            connection = nil
            return (wasOpen ? self.delegate : nil, failAllLocked())
        }
        for (callback, error) in failed { callback(error) }
        delegate?.transport(self, didCloseWith: lostError())
    }

    /// Reads until the socket has nothing more, reading is turned off, or one pass's limit.
    private func readAvailable() {
        let morePending = withUnsafeTemporaryAllocation(byteCount: Self.readChunk, alignment: 1) { readAvailable(into: $0) }
        // More may wait; let the loop serve its other sockets first.
        if morePending { loop.service(self) }
    }

    /// One read pass into `buffer`; `true` when it stopped at the pass's limit.
    private func readAvailable(into buffer: UnsafeMutableRawBufferPointer) -> Bool {
        var total = 0
        while total < Self.readPassLimit {
            enum Read { case bytes(Int, (any WebSocketTransportDelegate)?), wouldBlock, ended(URLError?), stopped }
            let read: Read = lock.withLock {
                guard case .open = phase, reading, let easy = connection?.easy else { return .stopped }
                switch receiveLocked(into: buffer, easy: easy) {
                case .success(.bytes(let received)):
                    bytesReceived += Int64(received)
                    return .bytes(received, delegate)
                case .success(.wouldBlock):
                    return .wouldBlock
                case .success(.endOfStream):
                    return .ended(nil)
                case .success(.failed(let code)):
                    return .ended(StreamSocket.error(for: code, connecting: false, url: url))
                case .failure(let error):
                    return .ended(error)
                }
            }
            switch read {
            case .bytes(let count, let delegate):
                total += count
                // Only this thread reads: `buffer` is not touched until the delegate returns.
                delegate?.transport(self, didReceive: UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                // A plain socket that gave less than asked is drained: epoll says when more comes.
                if plainSocket != nil, count < buffer.count { return false }
            case .wouldBlock, .stopped:
                return false
            case .ended(let error):
                peerClosed(error ?? URLError(.networkConnectionLost, url: url,
                                             description: "The WebSocket server closed the connection."))
                return false
            }
        }
        return true
    }

    /// Reads what the socket has, up to `buffer`'s size: what the read did, or libcurl's error.
    /// Call with the lock held.
    private func receiveLocked(into buffer: UnsafeMutableRawBufferPointer,
                               easy: UnsafeMutableRawPointer) -> Result<StreamSocket.Outcome, URLError> {
        guard let base = buffer.baseAddress else { return .success(.wouldBlock) }
        if let plainSocket { return .success(plainSocket.read(into: base, count: buffer.count)) }
        var received = 0
        let result = curl_easy_recv(easy, base, buffer.count, &received)
        if result == CURLE_AGAIN { return .success(.wouldBlock) }
        if result == CURLE_OK { return .success(received > 0 ? .bytes(received) : .endOfStream) }
        return .failure(CurlErrorMapping.error(for: result, url: url))
    }

    /// The peer closed the connection or it failed: report it once and close.
    private func peerClosed(_ error: URLError) {
        let (delegate, failed): ((any WebSocketTransportDelegate)?, [(@Sendable (URLError?) -> Void, URLError?)]) = lock.withLock {
            guard phase != .closed else { return (nil, []) }
            let failed = failAllLocked()
            let wasClosing = phase == .closing
            closeNowLocked()
            return (wasClosing ? nil : self.delegate, failed)
        }
        for (callback, callbackError) in failed { callback(callbackError) }
        delegate?.transport(self, didCloseWith: error)
    }

    // MARK: Closing

    /// Closes the connection once the queued writes are out, or after ``closeLinger`` at the
    /// latest. The delegate hears nothing more.
    func close() {
        lock.withLock {
            guard case .open = phase else { return }
            phase = .closing
            closeIfFlushedLocked()
            updateInterestLocked()
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.closeLinger) { [self] in abort() }
    }

    /// Closes the connection now; queued writes fail. The delegate hears nothing more.
    func abort() {
        let failed = lock.withLock {
            let failed = failAllLocked()
            closeNowLocked()
            return failed
        }
        for (callback, error) in failed { callback(error) }
    }

    private func closeIfFlushedLocked() {
        if case .closing = phase, queue.isEmpty, !directWrite { closeNowLocked() }
    }

    /// Forgets the socket on the loop thread, then cleans the handle up there (which closes the
    /// socket, with TLS's close_notify for wss).
    private func closeNowLocked() {
        guard phase != .closed else { return }
        phase = .closed
        interest = (false, false)
        loop.unwatch(socket) { [self] in
            let closed = lock.withLock {
                defer { connection = nil }
                return connection
            }
            withExtendedLifetime(closed) {}
        }
    }

    /// Tells the loop what to watch for: reading while reading is on, writing while bytes wait.
    private func updateInterestLocked() {
        guard phase != .closed else { return }
        let wanted = (readable: reading && phase == .open, writable: !queue.isEmpty && !directWrite)
        guard wanted != interest else { return }
        interest = wanted
        loop.watch(socket, for: self, readable: wanted.readable, writable: wanted.writable)
    }
}
