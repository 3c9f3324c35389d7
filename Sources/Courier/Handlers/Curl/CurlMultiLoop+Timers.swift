internal import CCurl
import Foundation

// libcurl's timers, the pass over every transfer and the finished transfers, for ``CurlMultiLoop``
// (drive lock held).
extension CurlMultiLoop {
    /// Runs `curl_multi_socket_action` for timers while libcurl says one is due now (bounded, so
    /// that a transfer that keeps asking to run now cannot hold the lock forever).
    func runDueTimers() {
        var running: Int32 = 0
        for _ in 0..<8 {
            guard nextTimeoutMilliseconds() == 0 else { return }
            _ = curl_multi_socket_action(multi, courier_socket_timeout, 0, &running)
        }
    }

    /// Runs every transfer once (``nudge()``); a burst of nudges is one pass.
    func runAll() {
        guard !active.isEmpty else { return }
        var running: Int32 = 0
        _ = courier_multi_socket_all(multi, &running)
    }

    /// Milliseconds until libcurl's next timer (0: due now), or `nil` when it has none.
    func nextTimeoutMilliseconds() -> Int? {
        var milliseconds = -1
        guard curl_multi_timeout(multi, &milliseconds) == CURLM_OK, milliseconds >= 0 else { return nil }
        return milliseconds
    }

    /// Reports every transfer libcurl says has finished, after taking it out of the multi handle.
    func collectFinished() {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            var result = CURLE_OK
            guard let easy = courier_multi_done_handle(message, &result) else { continue }
            guard let transfer = active.removeValue(forKey: easy) else { continue }
            curl_multi_remove_handle(multi, easy)
            transfer.finish(result: result)
        }
    }
}
