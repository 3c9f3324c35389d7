import Foundation

/// What one stream task's connection is doing, as one value: the reads, writes and closes the app
/// queued, the bytes read ahead, whether each direction is open, TLS, and how the stream ended.
///
/// Pure, like `TaskStateMachine`: events go in (the app's calls, the transport's reports, timers)
/// and each returns the ``StreamAction``s to carry out; no locks, sockets, queues or task
/// references. ``StreamConnection`` keeps it under its lock and performs the actions after
/// unlocking; what the transport should do next (``wantsToRead``, ``outbound``,
/// ``pendingTransportWork``) is read from it, never stored beside it. Its stored properties are
/// changed only by the events (they are not `private(set)` because the events live in extensions in
/// other files).
///
/// Ordering. Reads complete in the order they were queued, as do writes; reads and writes do not
/// wait for each other. `closeWrite()` takes effect once the writes queued before it are done,
/// `closeRead()` once the reads queued before it are. `startSecureConnection()` and
/// `captureStreams()` are barriers for both directions: they take effect once everything queued
/// before them is done, and what is queued after them waits for them (for TLS: for the handshake
/// and the trust decision).
struct StreamStateMachine: Sendable {
    /// Where the connection is.
    enum Phase: Sendable, Equatable {
        /// Not resumed yet: operations queue.
        case idle
        /// Resolving and connecting.
        case connecting
        /// Connected: bytes flow (in TLS once ``tls`` is ``TLSPhase/secure``).
        case open
        /// Ended; every operation fails with `error` (`nil`: the stream was closed in both
        /// directions, or captured).
        case ended(URLError?)
    }

    /// The TLS layer.
    enum TLSPhase: Sendable, Equatable {
        /// Plain TCP.
        case plain
        /// The handshake (and the trust decision) runs; no application bytes flow.
        case handshaking
        /// Application bytes go through TLS.
        case secure
    }

    /// One queued operation.
    enum Operation: Sendable, Equatable {
        case read(id: Int, minimum: Int, maximum: Int)
        case write(id: Int, data: Data)
        case closeRead
        case closeWrite
        case startTLS
        case capture
    }

    /// The most bytes read ahead of the app's reads (the socket is not read while this many wait).
    static let readAheadLimit = 256 << 10

    /// The URL errors name (`tcp://host:port`).
    let url: URL?
    var phase: Phase = .idle
    var tls: TLSPhase = .plain
    /// Everything queued and not finished, in order.
    var operations: [Operation] = []
    /// How much of the first queued write went to the transport.
    var writtenOfHead = 0
    /// Bytes read and not yet handed to a read.
    var inbound = Data()
    /// The peer ended its side (EOF).
    var peerClosed = false
    /// `closeRead()` took effect.
    var readClosed = false
    /// `closeWrite()` took effect.
    var writeClosed = false
    /// `readClosedFor` / `writeClosedFor` were reported.
    var toldReadClosed = false
    var toldWriteClosed = false
    /// Transport work queued by a barrier or close, for the connection's next service.
    var pendingTransportWork: [StreamTransportWork] = []
    /// The stream was cancelled (operations then fail with `cancelled`).
    var cancelled = false

    /// A stream to `url` (the `failingURL` of its errors), not yet resumed.
    init(url: URL?) {
        self.url = url
    }
}

/// What the transport must do on its thread (the connection's service).
enum StreamTransportWork: Sendable, Equatable {
    /// Resolve the host and connect.
    case connect
    /// Shut the socket's read side.
    case shutdownRead
    /// Send TLS close_notify if secure, then shut the socket's write side.
    case shutdownWrite
    /// Start the TLS handshake.
    case beginTLS
    /// Hand the socket (and what was read ahead) to a pair of Foundation streams.
    case capture(buffered: Data)
    /// Close the socket.
    case close
}

/// What the connection does after an event (besides the transport work).
enum StreamAction: Sendable, Equatable {
    /// Complete read `id`: `data` (`nil` on error), `atEOF`, `error`.
    case completeRead(id: Int, data: Data?, atEOF: Bool, error: URLError?)
    /// Complete write `id` (`nil`: its bytes were handed to the socket).
    case completeWrite(id: Int, error: URLError?)
    /// Tell the delegate `readClosedFor`.
    case readClosed
    /// Tell the delegate `writeClosedFor`.
    case writeClosed
    /// The transport has work (``StreamStateMachine/pendingTransportWork``) or new interest: service it.
    case service
    /// End the task with this error (`nil`: success).
    case finish(URLError?)
}
