import Foundation

/// Upload progress for a libcurl handler: libcurl reports running totals, often repeating one; the
/// task wants each step once, as `didSendBodyData(bytesSent:totalBytesSent:totalBytesExpectedToSend:)`.
/// A value, kept by ``CurlLoad`` under its lock (one per load, started again by each attempt).
struct CurlUploadProgress {
    private var lastTotal: Int64 = 0

    /// Starts counting again (a new attempt sends the body from its start).
    mutating func reset() {
        lastTotal = 0
    }

    /// Takes libcurl's running total: the bytes sent since the last report (0: nothing to report).
    mutating func advance(to total: Int64) -> Int64 {
        defer { lastTotal = max(lastTotal, total) }
        return total - lastTotal
    }

    /// Reports `delta` bytes sent (of `total`, `expected` in all) to `client`, when there are any.
    static func report(_ delta: Int64, totalBytesSent total: Int64, expected: Int64, to client: (any URLProtocolClient)?) {
        guard delta > 0 else { return }
        (client as? BuiltInHandlerClient)?.didSendBodyData(delta, totalBytesSent: total,
                                                           totalBytesExpectedToSend: expected > 0 ? expected : NSURLSessionTransferSizeUnknown)
    }
}
