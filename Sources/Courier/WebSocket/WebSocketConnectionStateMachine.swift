import Foundation

/// The protocol side of one WebSocket connection, as a pure state machine: events go in (bytes
/// received, the app's sends, pings and close, a timeout, the transport closing), actions come out
/// (`WebSocketConnectionAction`: bytes to write, messages to deliver, pings to resolve, closing
/// the transport, the end). It does no I/O, holds no lock and starts no timer; its owner
/// serialises the calls.
///
/// States:
/// - `open`: messages flow both ways; pings are answered with pongs carrying the same payload,
///   also between the fragments of a message.
/// - `closing`: Courier sent a close frame (the app's `cancel(with:reason:)`) and waits for the
///   peer's. Nothing more is sent — no data frame, no pong: the close frame is Courier's last.
///   Messages and pongs that arrive are still handed out. The owner arms a timer when it calls
///   `close(code:reason:)` and reports `closeHandshakeTimedOut()` if it fires.
/// - `closed`: the end has been reported; later events do nothing.
///
/// A close frame from the peer while open is echoed at once with its status code (no reason), so
/// that path goes from `open` through closing to `closed` in one event. A protocol violation
/// sends a close frame with the violation's code (1002, 1007, 1009) unless one was sent already,
/// closes the transport and ends with `.failed(.protocolViolation(…))`.
///
/// Pings carry an 8-byte sequence number. A pong resolves the outstanding ping whose number it
/// echoes and every older one, oldest first (a peer may answer only the latest of several pings,
/// RFC 6455 §5.5.3); a pong matching no outstanding ping is ignored.
struct WebSocketConnectionStateMachine: Sendable {
    /// Where the connection is.
    enum State: Equatable, Sendable {
        /// Open both ways.
        case open
        /// Courier sent this close frame and waits for the peer's.
        case closing(sent: WebSocketCloseFrame)
        /// Over, with this end.
        case closed(WebSocketConnectionEnd)
    }

    /// Where the connection is.
    private(set) var state: State = .open
    private var decoder: WebSocketFrameDecoder
    private var assembler: WebSocketMessageAssembler
    private let encoder: WebSocketFrameEncoder
    /// Where masking keys come from: the system's random numbers, fetched in batches.
    private var random = WebSocketRandomPool()
    private var lastPingNumber: UInt64 = 0
    /// The numbers of the pings sent and not yet answered, oldest first.
    private var outstandingPings: [UInt64] = []

    /// A state machine for a connection whose handshake has just succeeded.
    init(role: WebSocketRole = .client,
         maximumMessageSize: Int = WebSocketMessageAssembler.defaultMaximumMessageSize) {
        decoder = WebSocketFrameDecoder(role: role, maximumPayloadLength: maximumMessageSize)
        assembler = WebSocketMessageAssembler(maximumMessageSize: maximumMessageSize)
        encoder = WebSocketFrameEncoder(role: role)
    }

    /// The largest message accepted, in bytes (the task's `maximumMessageSize`). A change applies
    /// from the next frame on.
    var maximumMessageSize: Int {
        get { assembler.maximumMessageSize }
        set { assembler.maximumMessageSize = newValue }
    }

    /// How many pings wait for their pong.
    var outstandingPingCount: Int { outstandingPings.count }

    /// How many received bytes wait for the rest of their frame.
    var bufferedByteCount: Int { decoder.bufferedByteCount }

    // MARK: Events

    /// Bytes arrived from the peer: decodes every complete frame in them and reacts to each.
    mutating func receivedBytes(_ bytes: some Sequence<UInt8>) -> [WebSocketConnectionAction] {
        guard !isClosed else { return [] }
        decoder.append(bytes)
        var actions: [WebSocketConnectionAction] = []
        while !isClosed {
            do {
                // A data frame may carry what the open message has left: one that would take it
                // over the limit is refused from its header, before its payload is buffered.
                decoder.maximumPayloadLength = assembler.remainingMessageCapacity
                guard let frame = try decoder.nextFrame() else { break }
                try handle(frame, into: &actions)
            } catch {
                fail(error, into: &actions)
            }
        }
        return actions
    }

    /// The app sends a message: its frame's bytes to write, or `notConnected` once closing.
    mutating func send(_ message: WebSocketMessage) -> Result<Data, WebSocketConnectionError> {
        guard case .open = state else { return .failure(.notConnected) }
        switch message {
        case .data(let data):
            return .success(data.withUnsafeBytes {
                encoder.encode(fin: true, opcode: .binary, payload: $0, using: &random)
            })
        case .string(let string):
            var text = string
            return .success(text.withUTF8 {
                encoder.encode(fin: true, opcode: .text, payload: UnsafeRawBufferPointer($0), using: &random)
            })
        }
    }

    /// The app sends a ping (`sendPing(pongReceiveHandler:)`): the ping's bytes to write, or
    /// `notConnected` once closing. The ping is outstanding until a `resolvePings` action.
    mutating func sendPing() -> Result<Data, WebSocketConnectionError> {
        guard case .open = state else { return .failure(.notConnected) }
        lastPingNumber &+= 1
        outstandingPings.append(lastPingNumber)
        return .success(encoder.encode(WebSocketFrame(opcode: .ping, payload: Self.pingPayload(lastPingNumber)), using: &random))
    }

    /// The app closes the connection (`cancel(with:reason:)`): writes the close frame
    /// (`WebSocketCloseFrame(sending:reason:)`) and waits for the peer's. Does nothing unless open.
    mutating func close(code: WebSocketCloseCode, reason: Data?) -> [WebSocketConnectionAction] {
        guard case .open = state else { return [] }
        let frame = WebSocketCloseFrame(sending: code, reason: reason)
        state = .closing(sent: frame)
        return [.write(encoder.encode(WebSocketFrame(opcode: .close, payload: frame.payload), using: &random))]
    }

    /// The peer did not answer Courier's close frame in time: gives up on the handshake.
    mutating func closeHandshakeTimedOut() -> [WebSocketConnectionAction] {
        guard case .closing = state else { return [] }
        return finish(.failed(.closeHandshakeTimedOut), closingTransport: true)
    }

    /// The transport closed (end of stream or an error). Before the close handshake completed,
    /// that ends the connection with `connectionLost`.
    mutating func transportClosed() -> [WebSocketConnectionAction] {
        guard !isClosed else { return [] }
        return finish(.failed(.connectionLost), closingTransport: false)
    }

    // MARK: Frames

    private var isClosed: Bool {
        if case .closed = state { return true }
        return false
    }

    private mutating func handle(_ frame: WebSocketFrame,
                                 into actions: inout [WebSocketConnectionAction]) throws(WebSocketProtocolError) {
        switch frame.opcode {
        case .text, .binary, .continuation:
            if let message = try assembler.append(frame) {
                actions.append(.deliver(message))
            }
        case .ping:
            guard case .open = state else { return }
            actions.append(.write(encoder.encode(WebSocketFrame(opcode: .pong, payload: frame.payload), using: &random)))
        case .pong:
            guard frame.payload.count == 8,
                  let index = outstandingPings.firstIndex(where: { Self.pingPayload($0) == frame.payload }) else { return }
            outstandingPings.removeFirst(index + 1)
            actions.append(.resolvePings(count: index + 1))
        case .close:
            let received = try WebSocketCloseFrame(payload: frame.payload)
            if case .open = state {
                let echo = WebSocketCloseFrame(code: received.code)
                actions.append(.write(encoder.encode(WebSocketFrame(opcode: .close, payload: echo.payload), using: &random)))
            }
            actions += finish(.closed(received), closingTransport: true)
        }
    }

    /// Fails the connection for a protocol violation (RFC 6455 §7.1.7): a close frame with its
    /// code unless one was sent, then the transport closes.
    private mutating func fail(_ violation: WebSocketProtocolError, into actions: inout [WebSocketConnectionAction]) {
        if case .open = state {
            let frame = WebSocketCloseFrame(sending: violation.closeCode, reason: Data(violation.reason.utf8))
            actions.append(.write(encoder.encode(WebSocketFrame(opcode: .close, payload: frame.payload), using: &random)))
        }
        actions += finish(.failed(.protocolViolation(violation)), closingTransport: true)
    }

    private mutating func finish(_ end: WebSocketConnectionEnd, closingTransport: Bool) -> [WebSocketConnectionAction] {
        state = .closed(end)
        outstandingPings = []
        return closingTransport ? [.closeTransport, .finish(end)] : [.finish(end)]
    }

    /// A ping's payload: its number, big-endian.
    private static func pingPayload(_ number: UInt64) -> Data {
        withUnsafeBytes(of: number.bigEndian) { Data($0) }
    }
}
