import Foundation

/// The input stream `captureStreams()` hands to `urlSession(_:streamTask:didBecome:outputStream:)`:
/// a Foundation `InputStream` reading the task's connection (TLS included), starting with the bytes
/// the task had already read. `read` blocks until bytes or the end arrive, as a socket stream's does.
final class StreamCapturedInputStream: InputStream {
    private let channel: StreamCapturedChannel?
    private var status: Stream.Status = .notOpen
    private var failure: (any Error)?

    init(channel: StreamCapturedChannel) {
        self.channel = channel
        super.init(data: Data())
    }

    override func open() {
        if status == .notOpen { status = .open }
    }

    override func close() {
        status = .closed
        channel?.closeInput()
    }

    override var streamStatus: Stream.Status { status }
    override var streamError: (any Error)? { failure }
    override var hasBytesAvailable: Bool { status == .open && (channel?.hasBytesAvailable ?? false) }

    override func getBuffer(_ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>,
                            length len: UnsafeMutablePointer<Int>) -> Bool { false }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
        guard status == .open, len > 0, let channel else { return status == .atEnd ? 0 : -1 }
        status = .reading
        switch channel.read(into: buffer, count: len) {
        case .bytes(let count):
            status = .open
            return count
        case .endOfStream:
            status = .atEnd
            return 0
        case .failed(let reason):
            status = .error
            failure = URLError(.networkConnectionLost, url: nil, description: "Reading the stream failed: \(reason).")
            return -1
        }
    }
}
