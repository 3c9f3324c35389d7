import Foundation

/// Puts messages together from data frames (RFC 6455 §5.4): a text or binary frame starts a
/// message, continuation frames extend it, the frame with FIN set ends it. Control frames are not
/// its business (the connection state machine handles them, also between fragments).
///
/// - A continuation frame with no message open, or a text or binary frame while one is open, is a
///   protocol error (1002).
/// - A message longer than `maximumMessageSize` is refused as soon as a frame takes it over the
///   limit (1009), so at most that many bytes are held.
/// - Text is validated as each fragment arrives (`WebSocketUTF8Validator`): a bad byte fails the
///   message at once, even when a code point is split across fragments (1007).
struct WebSocketMessageAssembler: Sendable {
    /// The default maximum message size: 1 MiB, as `URLSessionWebSocketTask.maximumMessageSize`.
    static let defaultMaximumMessageSize = 1024 * 1024

    /// The largest message accepted, in bytes.
    var maximumMessageSize: Int

    /// The message being put together from fragments, if one is open.
    private var partial: Partial?

    private struct Partial: Sendable {
        var isText: Bool
        var bytes: Data
        var validator: WebSocketUTF8Validator
    }

    /// Creates an assembler.
    init(maximumMessageSize: Int = WebSocketMessageAssembler.defaultMaximumMessageSize) {
        self.maximumMessageSize = maximumMessageSize
    }

    /// Whether a fragmented message has started and not ended.
    var isAssembling: Bool { partial != nil }

    /// How many more bytes the next data frame may carry: what the open message has left of
    /// `maximumMessageSize`, or all of it between messages.
    var remainingMessageCapacity: Int {
        max(0, maximumMessageSize - (partial?.bytes.count ?? 0))
    }

    /// Takes the next data frame; returns the message it completes, if it completes one.
    ///
    /// - Throws: `continuationWithoutStart`, `newMessageDuringFragmentedMessage`,
    ///   `messageTooBig` or `invalidUTF8`. After an error the assembler holds no message.
    mutating func append(_ frame: WebSocketFrame) throws(WebSocketProtocolError) -> WebSocketMessage? {
        do {
            return try assemble(frame)
        } catch {
            partial = nil
            throw error
        }
    }

    private mutating func assemble(_ frame: WebSocketFrame) throws(WebSocketProtocolError) -> WebSocketMessage? {
        switch frame.opcode {
        case .text, .binary:
            guard partial == nil else { throw .newMessageDuringFragmentedMessage }
            try checkSize(frame.payload.count)
            let isText = frame.opcode == .text
            var validator = WebSocketUTF8Validator()
            if isText {
                guard frame.payload.withUnsafeBytes({ validator.validate($0) }) else { throw .invalidUTF8 }
            }
            if frame.fin {
                // One frame, one message: no copy.
                return try message(isText: isText, bytes: frame.payload, validator: validator)
            }
            partial = Partial(isText: isText, bytes: frame.payload, validator: validator)
            return nil
        case .continuation:
            guard var current = partial else { throw .continuationWithoutStart }
            partial = nil
            try checkSize(current.bytes.count + frame.payload.count)
            if current.isText {
                guard frame.payload.withUnsafeBytes({ current.validator.validate($0) }) else { throw .invalidUTF8 }
            }
            current.bytes.append(frame.payload)
            if frame.fin {
                return try message(isText: current.isText, bytes: current.bytes, validator: current.validator)
            }
            partial = current
            return nil
        case .close, .ping, .pong:
            return nil
        }
    }

    private func checkSize(_ count: Int) throws(WebSocketProtocolError) {
        guard count <= maximumMessageSize else { throw .messageTooBig }
    }

    private func message(isText: Bool, bytes: Data, validator: WebSocketUTF8Validator) throws(WebSocketProtocolError) -> WebSocketMessage {
        guard isText else { return .data(bytes) }
        // A message may not end inside a code point.
        guard validator.isAtCodePointBoundary else { throw .invalidUTF8 }
        return .string(String(decoding: bytes, as: UTF8.self))
    }
}
