internal import CCurl
import Foundation

/// One WebSocket connection's socket, after libcurl opened it (`CURLOPT_CONNECT_ONLY`: proxy
/// tunnel and TLS done, see ``WebSocketConnector``): bytes go out with `curl_easy_send` and come in
/// with `curl_easy_recv`, non-blocking, driven by the socket's readiness on the session's libcurl
/// loop thread (``CurlLoopSocketClient``). No thread is made per connection.
///
/// - Writes are queued in order; a write that the socket takes only in part keeps its rest at the
///   head of the queue until the socket is writable again. Each write's `written` closure runs once
///   all its bytes were handed to the socket (or with an error when the connection ended first).
///   A write from an app thread goes straight to the socket when nothing waits before it.
/// - Reads happen only while reading is enabled (``setReading(_:order:)``): the owner turns it off when
///   its buffer of received messages is full, so a peer that sends faster than the app receives
///   fills the kernel's socket buffer, not Courier's memory.
/// - ``close()`` closes once the queued writes are out (bounded by ``closeLinger``); the easy handle
///   is cleaned up on the loop thread after the loop forgot the descriptor.
///
/// `lock` guards the easy handle and all state: libcurl's connection (an OpenSSL stream for wss)
/// is used by one thread at a time. The delegate is called after the lock is released. Lock order:
/// this lock, then ``CurlMultiLoop``'s state lock (a leaf).
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
    private let loop: CurlMultiLoop
    private let url: URL?
    private weak var delegate: (any WebSocketTransportDelegate)?
    private var phase = Phase.open
    private var queue: [PendingWrite] = []
    private var reading = true
    /// The `order` of the last ``setReading(_:order:)`` applied.
    private var readingOrder = 0
    private var interest: (readable: Bool, writable: Bool) = (false, false)
    /// Bytes handed to the socket and read from it, for metrics and tests.
    private(set) var bytesSent: Int64 = 0
    private(set) var bytesReceived: Int64 = 0

    /// Takes over `connection` (connected, its socket known) and starts watching it on `loop`.
    init(connection: WebSocketConnector.Connection, socket: Int32, loop: CurlMultiLoop, url: URL?,
         delegate: any WebSocketTransportDelegate) {
        self.connection = connection
        self.socket = socket
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
        let finished: [(@Sendable (URLError?) -> Void, URLError?)] = lock.withLock {
            guard case .open = phase else {
                return written.map { [($0, lostError())] } ?? []
            }
            queue.append(PendingWrite(bytes: bytes, written: written))
            let done = flushLocked()
            updateInterestLocked()
            return done
        }
        for (callback, error) in finished { callback(error) }
    }

    /// Writes what the socket takes, in order; returns the callbacks of the writes completed (or
    /// failed, when the connection broke). Call with the lock held.
    private func flushLocked() -> [(@Sendable (URLError?) -> Void, URLError?)] {
        var done: [(@Sendable (URLError?) -> Void, URLError?)] = []
        guard let easy = connection?.easy else { return failAllLocked() }
        while !queue.isEmpty {
            var sent = 0
            let result = queue[0].bytes.withUnsafeBytes { raw -> CURLcode in
                let rest = UnsafeRawBufferPointer(rebasing: raw[queue[0].offset...])
                guard let base = rest.baseAddress, !rest.isEmpty else { return CURLE_OK }
                return curl_easy_send(easy, base, rest.count, &sent)
            }
            if result == CURLE_AGAIN { break }
            guard result == CURLE_OK else {
                return done + failAllLocked()
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
            enum Read { case bytes(Int), wouldBlock, ended(URLError?), stopped }
            let read: Read = lock.withLock {
                guard case .open = phase, reading, let easy = connection?.easy else { return .stopped }
                var received = 0
                let result = curl_easy_recv(easy, buffer.baseAddress, buffer.count, &received)
                if result == CURLE_AGAIN { return .wouldBlock }
                if result == CURLE_OK, received > 0 {
                    bytesReceived += Int64(received)
                    return .bytes(received)
                }
                let error: URLError? = result == CURLE_OK ? nil
                    : CurlErrorMapping.error(for: result, url: url)
                return .ended(error)
            }
            switch read {
            case .bytes(let count):
                total += count
                let delegate = lock.withLock { self.delegate }
                // Only this thread reads: `buffer` is not touched until the delegate returns.
                delegate?.transport(self, didReceive: UnsafeRawBufferPointer(rebasing: buffer[..<count]))
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
        if case .closing = phase, queue.isEmpty { closeNowLocked() }
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
        let wanted = (readable: reading && phase == .open, writable: !queue.isEmpty)
        guard wanted != interest else { return }
        interest = wanted
        loop.watch(socket, for: self, readable: wanted.readable, writable: wanted.writable)
    }
}
