internal import CCurl
import Foundation

/// What a transfer reports, on the loop thread. The handler adopts it.
protocol CurlTransferDelegate: AnyObject, Sendable {
    /// A complete block of response headers (status line and fields) other than a 1xx.
    func transfer(_ transfer: CurlTransfer, didReceiveHead head: CurlResponseHead)

    /// Body bytes (already content-decoded). Return `false` to pause: libcurl keeps the bytes and
    /// delivers them again after ``CurlMultiLoop/unpause(_:)``.
    func transfer(_ transfer: CurlTransfer, didReceive bytes: UnsafeRawBufferPointer) -> Bool

    /// Upload progress.
    func transfer(_ transfer: CurlTransfer, didSend totalBytesSent: Int64, of expected: Int64)

    /// The transfer ended with `result` (CURLE_OK on success).
    func transfer(_ transfer: CurlTransfer, didFinishWith result: CURLcode)
}

/// The status line and header fields of one response.
struct CurlResponseHead: Sendable {
    var statusCode: Int
    var httpVersion: String
    /// The fields in the order received; well-known names have their usual capitalisation
    /// (``HTTPURLResponse/canonicalName(_:)``).
    var fields: HTTPHeaderFields
}
