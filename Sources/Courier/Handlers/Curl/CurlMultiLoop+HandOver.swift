internal import CCurl
import Foundation

// Taking an HTTP/1.1 upgrade's connection away from libcurl (`.becomeStream`): see `CurlUpgradeSocket`.
extension CurlMultiLoop {
    /// On the loop thread, drive lock held: captures what libcurl holds of the response's body (a
    /// paused transfer keeps it; unpausing hands it to the write callback within the call), marks
    /// the socket, removes the transfer mid-transfer — libcurl closes its connection through
    /// ``CurlUpgradeSocket``'s close callback, which leaves the marked socket open — and checks that
    /// the close came. The transfer reports nothing more.
    func takeConnection(of transfer: CurlTransfer) -> Result<HandedOverConnection, URLError> {
        let url = transfer.effectiveURL
        guard active[transfer.easy] != nil, !transfer.isAbandoned else {
            return .failure(URLError(.networkConnectionLost, url: url,
                                     description: "The server ended the upgraded connection before it could become a stream task."))
        }
        guard let socket = CurlUpgradeSocket.socket(of: transfer) else {
            return .failure(URLError(.unsupportedURL, url: url,
                                     description: "The connection of this response is not one Courier can hand to a stream task."))
        }
        transfer.beginCapture()
        curl_easy_pause(transfer.easy, CURLPAUSE_CONT)
        CurlUpgradeSocket.beginHandOver(socket)
        active.removeValue(forKey: transfer.easy)
        curl_multi_remove_handle(multi, transfer.easy)
        let buffered = transfer.endCapture()
        transfer.release()
        guard CurlUpgradeSocket.finishHandOver(socket) else {
            // libcurl kept the connection: it stays libcurl's, and the stream task is refused.
            return .failure(URLError(.unsupportedURL, url: url,
                                     description: "libcurl kept the upgraded connection; it cannot become a stream task."))
        }
        return .success(HandedOverConnection(descriptor: socket, buffered: buffered))
    }
}
