import Foundation

/// An upload's body as the event loop consumes it: bytes in memory, or a stream (a file, or the
/// app's stream) read ahead on a queue of its own, so a stream that blocks never stalls the loop.
/// At most ``readAheadLimit`` bytes wait in memory; the reader continues as the loop takes them.
final class SFTPUploadBody: @unchecked Sendable {
    enum Take {
        /// This many bytes were copied.
        case bytes(Int)
        /// Nothing is available yet; the loop is woken when there is.
        case wait
        /// The body is over.
        case end
        case failed(URLError)
    }

    static let readAheadLimit = 4 << 20
    static let readSize = 256 << 10

    private let lock = Lock()
    private var memory: Data?
    private var memoryOffset = 0
    private let stream: InputStream?
    private var chunks: [Data] = []
    private var chunkOffset = 0
    private var queued = 0
    private var ended = false
    private var error: URLError?
    private var reading = false
    private var closed = false
    private let queue = DispatchQueue(label: "courier.sftp.upload-body")
    private let wake: @Sendable () -> Void
    private let url: URL?

    /// The body's length when known.
    let length: Int64?

    init(data: Data) {
        memory = data
        stream = nil
        length = Int64(data.count)
        wake = {}
        url = nil
    }

    /// A body read from `stream`; `wake` is called (from the reading queue) when bytes arrive.
    init(stream: InputStream, length: Int64?, url: URL?, wake: @escaping @Sendable () -> Void) {
        self.stream = stream
        self.length = length
        self.url = url
        self.wake = wake
        reading = true
        let opening = UncheckedSendable(stream)
        queue.async { [self] in
            opening.value.open()
            readAhead()
        }
    }

    /// Copies up to `count` bytes to `destination` (event-loop thread).
    func take(into destination: UnsafeMutableRawPointer, count: Int) -> Take {
        guard count > 0 else { return .wait }
        if let memory {
            let available = memory.count - memoryOffset
            guard available > 0 else { return .end }
            let taken = min(available, count)
            memory.withUnsafeBytes { raw in
                if let base = raw.baseAddress { destination.copyMemory(from: base + memoryOffset, byteCount: taken) }
            }
            memoryOffset += taken
            return .bytes(taken)
        }
        let (result, restart): (Take, Bool) = lock.withLock {
            var copied = 0
            while copied < count, let first = chunks.first {
                let piece = min(first.count - chunkOffset, count - copied)
                first.withUnsafeBytes { raw in
                    if let base = raw.baseAddress {
                        (destination + copied).copyMemory(from: base + chunkOffset, byteCount: piece)
                    }
                }
                copied += piece
                chunkOffset += piece
                if chunkOffset == first.count {
                    chunks.removeFirst()
                    chunkOffset = 0
                }
            }
            queued -= copied
            let restart = !reading && !ended && error == nil && !closed && queued < Self.readAheadLimit / 2
            if restart { reading = true }
            if copied > 0 { return (.bytes(copied), restart) }
            if let error { return (.failed(error), restart) }
            return (ended ? .end : .wait, restart)
        }
        if restart { queue.async { [self] in readAhead() } }
        return result
    }

    /// Stops reading and closes the stream.
    func close() {
        let wasOpen: Bool = lock.withLock {
            defer { closed = true; chunks.removeAll() }
            return !closed
        }
        if wasOpen, let stream {
            let closing = UncheckedSendable(stream)
            queue.async { closing.value.close() }
        }
    }

    /// Reads until the read-ahead is full, the stream ends, or it fails (reading queue).
    private func readAhead() {
        guard let stream else { return }
        var buffer = [UInt8](repeating: 0, count: Self.readSize)
        while true {
            let stop: Bool = lock.withLock {
                if closed || queued >= Self.readAheadLimit {
                    reading = false
                    return true
                }
                return false
            }
            if stop { break }
            let count = stream.read(&buffer, maxLength: buffer.count)
            let done: Bool = lock.withLock {
                if count > 0 {
                    chunks.append(buffer.withUnsafeBytes { raw in raw.baseAddress.map { Data(bytes: $0, count: count) } ?? Data() })
                    queued += count
                    return false
                }
                if count == 0 {
                    ended = true
                } else {
                    // streamError traps for a stream that failed without one, so check the status first.
                    let underlying = stream.streamStatus == .error ? stream.streamError : nil
                    error = URLError(.cannotLoadFromNetwork, url: url,
                                     description: "Reading the upload body failed\(underlying.map { ": \($0.localizedDescription)" } ?? ".")",
                                     underlying: underlying)
                }
                reading = false
                return true
            }
            wake()
            if done { return }
        }
        wake()
    }
}
