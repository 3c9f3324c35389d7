import Foundation

/// Upload progress for a libcurl handler: libcurl reports running totals, often repeating one; the
/// task wants each step once, as `didSendBodyData(bytesSent:totalBytesSent:totalBytesExpectedToSend:)`.
final class CurlUploadProgress: @unchecked Sendable {
    private let lock = Lock()
    private var lastTotal: Int64 = 0

    /// Starts counting again (a new attempt sends the body from its start).
    func reset() {
        lock.withLock { lastTotal = 0 }
    }

    /// Reports the bytes sent since the last report, if any, to `client`.
    func report(totalBytesSent total: Int64, expected: Int64, to client: (any URLProtocolClient)?) {
        let delta: Int64 = lock.withLock {
            defer { lastTotal = max(lastTotal, total) }
            return total - lastTotal
        }
        guard delta > 0 else { return }
        (client as? BuiltInHandlerClient)?.didSendBodyData(delta, totalBytesSent: total,
                                                           totalBytesExpectedToSend: expected > 0 ? expected : NSURLSessionTransferSizeUnknown)
    }
}
