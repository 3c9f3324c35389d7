#if canImport(Glibc)
import Glibc
#endif

/// Cryptographic random numbers drawn from the system in batches: one `arc4random_buf` call (on
/// this glibc, one `getrandom` system call) fills ``batchSize`` draws, which are then handed out
/// one by one. A connection's state machine keeps one for its masking keys (RFC 6455 §10.3 asks for
/// a fresh unpredictable key per frame): drawing each key from `SystemRandomNumberGenerator` cost a
/// system call per message sent.
///
/// The draws are as unpredictable as the system's: they only wait in the connection's memory until
/// used. The pool takes no memory until its first draw.
struct WebSocketRandomPool: RandomNumberGenerator, Sendable {
    /// How many 64-bit draws one refill fetches (256 bytes).
    static let batchSize = 32

    private var draws: [UInt64] = []
    /// The next unused draw; `draws.count` when all are used.
    private var position = 0

    /// An empty pool; the first draw fills it.
    init() {}

    /// The next 64 random bits.
    mutating func next() -> UInt64 {
        if position == draws.count { refill() }
        defer { position += 1 }
        return draws[position]
    }

    private mutating func refill() {
        if draws.isEmpty { draws = [UInt64](repeating: 0, count: Self.batchSize) }
        draws.withUnsafeMutableBytes { bytes in
            guard let base = bytes.baseAddress else { return }
            arc4random_buf(base, bytes.count)
        }
        position = 0
    }
}
