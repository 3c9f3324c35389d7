/// The system's cryptographic random numbers (`SystemRandomNumberGenerator`, as its draws), as a
/// generator with storage: what the WebSocket code passes `inout` where it needs fresh randomness
/// (masking keys, `Sec-WebSocket-Key`, Digest client nonces).
///
/// `SystemRandomNumberGenerator` has no stored properties, so an `inout` of it has no real address:
/// under ThreadSanitizer, which records every `inout` access, the access went to an arbitrary
/// address and crashed the process. This generator has one byte of storage, so its address is real.
struct WebSocketRandom: RandomNumberGenerator {
    /// Storage only, so that an `inout` of the generator has an address.
    private var unused: UInt8 = 0

    /// A generator that draws from the system's.
    init() {}

    /// The next 64 random bits.
    mutating func next() -> UInt64 {
        UInt64.random(in: .min ... .max)
    }
}
