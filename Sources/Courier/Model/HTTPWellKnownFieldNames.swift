/// The well-known header field names with their usual capitalisation, found from a name's bytes
/// without making a string or hashing one.
///
/// The response head parser looks every field name up here (``CurlResponseHeadParser``), so the
/// table is an open-addressing array indexed by a cheap hash of the length and a few case-folded
/// bytes: a hit costs a byte comparison or two, and hands back both strings, made once (the
/// index key of ``HTTPHeaderFields/key(for:)`` and the usual spelling). A class, so that reaching
/// the shared table costs one reference count, not one per array.
final class HTTPWellKnownFieldNames: Sendable {
    /// The names, in their usual capitalisation.
    static let names = [
        "Accept", "Accept-Charset", "Accept-Encoding", "Accept-Language", "Accept-Patch", "Accept-Ranges",
        "Access-Control-Allow-Credentials", "Access-Control-Allow-Headers", "Access-Control-Allow-Methods",
        "Access-Control-Allow-Origin", "Access-Control-Expose-Headers", "Access-Control-Max-Age",
        "Age", "Allow", "Alt-Svc", "Authorization", "Cache-Control", "Connection", "Content-Disposition",
        "Content-Encoding", "Content-Language", "Content-Length", "Content-Location", "Content-Range",
        "Content-Security-Policy", "Content-Type", "Cookie", "Date", "ETag", "Expect", "Expires", "Forwarded",
        "From", "Host", "If-Match", "If-Modified-Since", "If-None-Match", "If-Range", "If-Unmodified-Since",
        "Keep-Alive", "Last-Modified", "Link", "Location", "Max-Forwards", "Origin", "Pragma",
        "Proxy-Authenticate", "Proxy-Authorization", "Proxy-Connection", "Range", "Referer", "Refresh",
        "Retry-After", "Server", "Set-Cookie", "Strict-Transport-Security", "TE", "Trailer",
        "Transfer-Encoding", "Upgrade", "User-Agent", "Vary", "Via", "Warning", "WWW-Authenticate",
        "X-Content-Type-Options", "X-Frame-Options", "X-Powered-By", "X-XSS-Protection",
    ]

    /// The table every look-up uses.
    static let shared = HTTPWellKnownFieldNames()

    /// One name: its index key (lowercase) and its usual spelling.
    struct Entry: Sendable {
        let key: String
        let canonical: String
    }

    /// Slots of the open-addressing table (a power of two, more than twice the names).
    private static let slotCount = 256
    private let entries: [Entry]
    /// Per slot, the position in `entries` plus one; 0 for an empty slot.
    private let slots: [UInt8]
    /// Every key's bytes, one after the other, and where each entry's start and how long they are:
    /// a candidate is compared with the name's bytes without touching its strings.
    private let keyBytes: [UInt8]
    private let keyStarts: [Int]
    private let keyLengths: [Int]

    private init() {
        var entries: [Entry] = []
        var slots = [UInt8](repeating: 0, count: Self.slotCount)
        var keyBytes: [UInt8] = []
        var keyStarts: [Int] = []
        var keyLengths: [Int] = []
        for name in Self.names {
            let key = HTTPHeaderFields.key(for: name)
            entries.append(Entry(key: key, canonical: name))
            keyStarts.append(keyBytes.count)
            keyLengths.append(key.utf8.count)
            keyBytes.append(contentsOf: key.utf8)
            let keyArray = Array(key.utf8)
            var slot = keyArray.withUnsafeBytes { Self.hash($0) } & (Self.slotCount - 1)
            while slots[slot] != 0 { slot = (slot + 1) & (Self.slotCount - 1) }
            slots[slot] = UInt8(entries.count)
        }
        self.entries = entries
        self.slots = slots
        self.keyBytes = keyBytes
        self.keyStarts = keyStarts
        self.keyLengths = keyLengths
    }

    /// The entry for the name in `bytes` (compared case-insensitively, ASCII), or `nil`.
    func entry(forName bytes: UnsafeRawBufferPointer) -> Entry? {
        var slot = Self.hash(bytes) & (Self.slotCount - 1)
        let found: Int? = keyBytes.withUnsafeBufferPointer { stored in
            while true {
                let position = Int(slots[slot])
                if position == 0 { return nil }
                let index = position - 1
                if keyLengths[index] == bytes.count, Self.matches(stored, from: keyStarts[index], bytes) { return index }
                slot = (slot + 1) & (Self.slotCount - 1)
            }
        }
        return found.map { entries[$0] }
    }

    /// The entry whose index key is `key`, or `nil`.
    func entry(forKey key: String) -> Entry? {
        var key = key
        return key.withUTF8 { entry(forName: UnsafeRawBufferPointer($0)) }
    }

    /// A hash of the length and the first, middle and last bytes, ASCII-lowercased: enough to tell
    /// the names apart in a few probes, without a pass over every byte.
    @inline(__always)
    private static func hash(_ bytes: UnsafeRawBufferPointer) -> Int {
        let count = bytes.count
        guard count > 0 else { return 0 }
        @inline(__always) func folded(_ byte: UInt8) -> Int { Int((byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte) }
        let mixed = count &* 0x9E37 ^ folded(bytes[0]) &* 0x1F ^ folded(bytes[count / 2]) &* 0x3B5 ^ folded(bytes[count - 1]) &* 0x7C1
        return mixed ^ (mixed >> 8)
    }

    /// Whether the stored key bytes from `start` (lowercase) are `bytes` with their ASCII case folded.
    ///
    /// A name of 8 bytes or more is compared 8 bytes at a time (the last word overlapping the one
    /// before it): a stored byte with bit 0x40 is a lowercase letter, which the name's byte matches
    /// with 0x20 set; any other stored byte (`-`) must match exactly. That is the byte loop's
    /// folding, for a few instructions per word instead of about 11 per byte.
    @inline(__always)
    private static func matches(_ stored: UnsafeBufferPointer<UInt8>, from start: Int, _ bytes: UnsafeRawBufferPointer) -> Bool {
        let count = bytes.count
        if count >= 8, let storedBase = stored.baseAddress, let nameBase = bytes.baseAddress {
            let storedRaw = UnsafeRawPointer(storedBase + start)
            @inline(__always) func wordMatches(at offset: Int) -> Bool {
                let key = storedRaw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                let name = nameBase.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                return name | ((key & 0x4040_4040_4040_4040) >> 1) == key
            }
            var offset = 0
            while offset + 8 <= count {
                if !wordMatches(at: offset) { return false }
                offset += 8
            }
            return offset == count || wordMatches(at: count - 8)
        }
        for offset in 0..<count {
            let byte = bytes[offset]
            if stored[start + offset] != ((byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte) { return false }
        }
        return true
    }
}
