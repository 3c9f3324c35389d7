import Foundation

/// The nonce of the opening handshake (RFC 6455 §4.1, §4.2.2): the client's `Sec-WebSocket-Key`
/// and the `Sec-WebSocket-Accept` value that proves the server read it.
enum WebSocketHandshakeKey {
    /// The GUID RFC 6455 appends to the key before hashing it.
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// A fresh `Sec-WebSocket-Key`: 16 random bytes from the system's generator, in base64.
    static func make() -> String {
        var generator = WebSocketRandom()
        return make(using: &generator)
    }

    /// A `Sec-WebSocket-Key` made of 16 bytes drawn from `generator`, in base64.
    static func make(using generator: inout some RandomNumberGenerator) -> String {
        var bytes = [UInt8]()
        bytes.reserveCapacity(16)
        for _ in 0..<2 {
            let value = generator.next() as UInt64
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        }
        return Data(bytes).base64EncodedString()
    }

    /// The `Sec-WebSocket-Accept` a server must answer `key` with: the base64 of the SHA-1 of the
    /// key followed by the GUID.
    static func acceptValue(for key: String) -> String {
        Data(SHA1.hash(Array((key + guid).utf8))).base64EncodedString()
    }
}
