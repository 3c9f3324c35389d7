import Foundation

/// The output stream `captureStreams()` hands over: a Foundation `OutputStream` writing to the
/// task's connection (TLS included). `write` blocks until the socket takes at least one byte.
final class StreamCapturedOutputStream: OutputStream {
    private let channel: StreamCapturedChannel?
    private var status: Stream.Status = .notOpen
    private var failure: (any Error)?

    init(channel: StreamCapturedChannel) {
        self.channel = channel
        super.init(toMemory: ())
    }

    /// Foundation requires it; a stream made this way is not connected and refuses writes.
    required init(toMemory: ()) {
        channel = nil
        super.init(toMemory: ())
    }

    override func open() {
        if status == .notOpen { status = .open }
    }

    override func close() {
        status = .closed
        channel?.closeOutput()
    }

    override var streamStatus: Stream.Status { status }
    override var streamError: (any Error)? { failure }
    override var hasSpaceAvailable: Bool { status == .open }

    override func write(_ buffer: UnsafePointer<UInt8>, maxLength len: Int) -> Int {
        guard status == .open, let channel else { return -1 }
        guard len > 0 else { return 0 }
        status = .writing
        switch channel.write(buffer, count: len) {
        case .bytes(let count):
            status = .open
            return count
        case .endOfStream, .failed:
            status = .error
            failure = URLError(.networkConnectionLost, url: nil, description: "Writing the stream failed.")
            return -1
        }
    }
}
