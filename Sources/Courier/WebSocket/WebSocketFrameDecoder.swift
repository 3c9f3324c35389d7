import Foundation

/// Turns the bytes of a WebSocket connection into frames (RFC 6455 §5.2), incrementally: bytes are
/// appended as they arrive, split anywhere, and `nextFrame()` hands out each frame once all its
/// bytes are in.
///
/// - **Fails fast.** Each header field is checked as soon as its byte has arrived — reserved bits,
///   opcode, masking, control-frame rules, the length — so a bad frame is refused before its
///   payload is waited for. The first error is sticky: every later call throws it again and the
///   buffer is dropped.
/// - **Bounded.** A data frame longer than `maximumPayloadLength` is refused from its header
///   (`messageTooBig`, 1009; the state machine lowers the limit to what a fragmented message has
///   left), and a control frame longer than 125 bytes as well, so the decoder
///   holds at most one frame plus what the caller appended beyond it. A large buffer is released
///   once it is empty (an idle connection keeps at most `retainedCapacity` bytes).
/// - **Lengths.** 7-, 16- and 64-bit lengths are read; a 64-bit length with its top bit set is a
///   protocol error. A length not encoded in the fewest bytes (say 5 as a 16-bit length) is
///   accepted: RFC 6455 asks senders for the minimal form but gives receivers no reason to refuse
///   the longer one, and the payload is bounded either way (Python's `websockets` accepts it too).
/// - **Masking.** As a client it refuses masked frames; as a server, unmasked ones. Payloads come
///   out unmasked.
struct WebSocketFrameDecoder: Sendable {
    /// Which end the decoder reads for.
    let role: WebSocketRole
    /// The longest data-frame payload accepted, in bytes (control frames have their own 125).
    var maximumPayloadLength: Int

    /// The bytes received and not yet decoded start at `start`.
    private var buffer: [UInt8] = []
    private var start = 0
    private var failure: WebSocketProtocolError?

    /// The capacity an empty buffer keeps; a larger one is released.
    static let retainedCapacity = 16 * 1024

    /// Creates a decoder.
    init(role: WebSocketRole = .client,
         maximumPayloadLength: Int = WebSocketMessageAssembler.defaultMaximumMessageSize) {
        self.role = role
        self.maximumPayloadLength = maximumPayloadLength
    }

    /// How many received bytes wait to be decoded.
    var bufferedByteCount: Int { buffer.count - start }

    /// Adds received bytes. After a failure they are ignored.
    mutating func append(_ bytes: some Sequence<UInt8>) {
        guard failure == nil else { return }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete frame, or `nil` until more bytes arrive.
    ///
    /// - Throws: The first protocol violation found, then the same error on every later call.
    mutating func nextFrame() throws(WebSocketProtocolError) -> WebSocketFrame? {
        if let failure { throw failure }
        do {
            return try decode()
        } catch {
            failure = error
            buffer = []
            start = 0
            throw error
        }
    }

    private mutating func decode() throws(WebSocketProtocolError) -> WebSocketFrame? {
        let available = buffer.count - start
        guard available >= 1 else {
            release()
            return nil
        }
        let first = buffer[start]
        guard first & 0x70 == 0 else { throw .reservedBitsSet }
        guard let opcode = WebSocketOpcode(rawValue: first & 0x0F) else { throw .unknownOpcode(first & 0x0F) }
        let fin = first & 0x80 != 0
        guard fin || !opcode.isControl else { throw .fragmentedControlFrame }
        guard available >= 2 else { return waitForMore() }

        let second = buffer[start + 1]
        let masked = second & 0x80 != 0
        switch role {
        case .client: guard !masked else { throw .maskedFrameFromServer }
        case .server: guard masked else { throw .unmaskedFrameFromClient }
        }
        let lengthCode = second & 0x7F
        if opcode.isControl, lengthCode > WebSocketFrame.maximumControlPayloadLength {
            // 126 and 127 announce an extended length, itself over 125 (or not minimal).
            throw .controlFrameTooLong(UInt64(lengthCode))
        }
        var headerLength = 2
        let length: UInt64
        switch lengthCode {
        case 126:
            headerLength += 2
            guard available >= headerLength else { return waitForMore() }
            length = UInt64(buffer[start + 2]) << 8 | UInt64(buffer[start + 3])
        case 127:
            headerLength += 8
            guard available >= headerLength else { return waitForMore() }
            var value: UInt64 = 0
            for index in 2..<10 { value = value << 8 | UInt64(buffer[start + index]) }
            guard value >> 63 == 0 else { throw .payloadLengthOutOfRange }
            length = value
        default:
            length = UInt64(lengthCode)
        }
        if !opcode.isControl, length > UInt64(max(maximumPayloadLength, 0)) { throw .messageTooBig }
        let payloadLength = Int(length)
        let keyOffset = headerLength
        if masked { headerLength += 4 }
        guard available - headerLength >= payloadLength else { return waitForMore(frameLength: headerLength + payloadLength) }

        let payloadStart = start + headerLength
        var payload = Data(buffer[payloadStart..<(payloadStart + payloadLength)])
        if masked {
            let key = WebSocketMaskingKey(buffer[start + keyOffset], buffer[start + keyOffset + 1],
                                          buffer[start + keyOffset + 2], buffer[start + keyOffset + 3])
            payload.withUnsafeMutableBytes { key.apply(to: $0) }
        }
        start = payloadStart + payloadLength
        if start == buffer.count { release() }
        return WebSocketFrame(fin: fin, opcode: opcode, payload: payload)
    }

    /// Keeps the undecoded tail at the front of the buffer (copied at most once per frame: after
    /// it, `start` is 0 until the frame is decoded) and reports that more bytes are needed. With
    /// `frameLength` (the whole frame's, once its header is read; bounded by the payload limit) the
    /// buffer makes room for all of it at once instead of doubling its way there.
    private mutating func waitForMore(frameLength: Int? = nil) -> WebSocketFrame? {
        if start > 0 {
            buffer.removeSubrange(0..<start)
            start = 0
        }
        if let frameLength, buffer.capacity < frameLength { buffer.reserveCapacity(frameLength) }
        return nil
    }

    /// Empties the buffer, keeping its storage only when it is small.
    private mutating func release() {
        buffer.removeAll(keepingCapacity: buffer.capacity <= WebSocketFrameDecoder.retainedCapacity)
        start = 0
    }
}
