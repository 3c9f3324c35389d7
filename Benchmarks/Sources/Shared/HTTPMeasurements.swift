// The benchmark's HTTP, HTTPS and FTP measurements (see Bench.swift).

#if USE_COURIER
import Courier
#else
import FoundationNetworking
#endif
import Foundation
import Dispatch
import Synchronization

// MARK: - HTTP measurements (against the nginx that Benchmarks/run.sh starts on 127.0.0.1)

/// Answers a server-trust challenge for the benchmark's own server (a self-signed certificate on
/// 127.0.0.1) by accepting it, as an app that pins a test server would; everything else gets
/// default handling. FoundationNetworking never presents server-trust challenges on Linux.
func answerServerTrust(_ challenge: URLAuthenticationChallenge,
                       _ completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
    #if USE_COURIER
    if challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
       challenge.protectionSpace.host == "127.0.0.1",
       let trust = challenge.protectionSpace.serverTrust {
        completionHandler(.useCredential, URLCredential(trust: trust))
        return
    }
    #endif
    completionHandler(.performDefaultHandling, nil)
}

/// The session delegate of the HTTP measurements that use completion handlers: it only answers the
/// server-trust challenge.
final class TrustingDelegate: NSObject, URLSessionDelegate, Sendable {
    func urlSession(_ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        answerServerTrust(challenge, completionHandler)
    }
}

/// The status code of a response, or nil when it is not HTTP.
func statusCode(_ response: URLResponse?) -> Int? {
    (response as? HTTPURLResponse)?.statusCode
}

/// 5. Small GETs over keep-alive: N requests for the same URL on one session, at most `window` in
/// flight (1: one after another). The session allows `window` connections per host (at least 6,
/// the default), so that `window` requests can really be in flight over HTTP/1.1. Reports
/// requests per second (after a warm-up that opens the connections) and peak RSS.
/// With `async` (window 1), each GET is `try await session.data(from:)`, one after the other, in
/// one Swift task; the calling thread waits for the whole run.
func benchHTTPGet(url: URL, count: Int, window: Int, expectedSize: Int?, timeout: Double, async: Bool = false) {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.httpMaximumConnectionsPerHost = max(6, window)
    let session = URLSession(configuration: configuration, delegate: TrustingDelegate(), delegateQueue: nil)
    defer { session.finishTasksAndInvalidate() }

    func runAsync(_ url: URL, _ n: Int, tally: Tally) -> UInt64? {
        let finished = DispatchSemaphore(value: 0)
        let start = now()
        Task {
            for _ in 0..<n {
                do {
                    let (data, response) = try await session.data(from: url)
                    if statusCode(response) != 200 {
                        tally.failed("status \(statusCode(response).map(String.init) ?? "none")")
                    } else if expectedSize == nil || data.count == expectedSize {
                        tally.succeeded(bytes: data.count)
                    } else {
                        tally.failed("unexpected body: \(data.count) bytes")
                    }
                } catch {
                    tally.failed(describe(error))
                }
            }
            finished.signal()
        }
        guard finished.wait(timeout: .now() + timeout) == .success else { return nil }
        return now() - start
    }

    func run(_ url: URL, _ n: Int, tally: Tally) -> UInt64? {
        if async { return runAsync(url, n, tally: tally) }
        let slots = DispatchSemaphore(value: window)
        let group = DispatchGroup()
        let deadline = DispatchTime.now() + timeout
        let start = now()
        for _ in 0..<n {
            guard slots.wait(timeout: deadline) == .success else { return nil }
            group.enter()
            let task = session.dataTask(with: url) { data, response, error in
                if let error {
                    tally.failed(describe(error))
                } else if statusCode(response) != 200 {
                    tally.failed("status \(statusCode(response).map(String.init) ?? "none")")
                } else if let data, expectedSize == nil || data.count == expectedSize {
                    tally.succeeded(bytes: data.count)
                } else {
                    tally.failed("unexpected body: \(data?.count ?? -1) bytes")
                }
                slots.signal()
                group.leave()
            }
            task.resume()
        }
        guard group.wait(timeout: deadline) == .success else { return nil }
        return now() - start
    }

    // Warm-up: opens the connections (and TLS sessions) and creates the lazily made machinery. Its
    // requests carry "-warm" at the end of the URL (or a query "?warm"), so that the server's log
    // tells them from the measured ones.
    let warmURL = URL(string: url.absoluteString + (url.query == nil ? "?warm" : "-warm")) ?? url
    let warmTally = Tally()
    guard run(warmURL, min(count, max(200, 4 * window)), tally: warmTally) != nil else {
        result("http_get_per_sec", "timeout", "req/s")
        note("warm-up did not finish within \(timeout) s: \(warmTally.snapshot.completed) completed")
        return
    }
    if warmTally.snapshot.failed == warmTally.snapshot.completed {
        note("every warm-up request failed; first: \(warmTally.snapshot.firstError ?? "?")")
        result("http_get_per_sec", "failed", "req/s")
        return
    }
    let tally = Tally()
    guard let elapsed = run(url, count, tally: tally) else {
        result("http_get_per_sec", "timeout", "req/s")
        note("\(tally.snapshot.completed) of \(count) requests completed within \(timeout) s")
        return
    }
    let s = tally.snapshot
    let seconds = Double(elapsed) / 1e9
    if s.failed > 0 {
        note("\(s.failed) of \(count) requests failed; first: \(s.firstError ?? "?")")
        result("http_get_failed", "\(s.failed)", "requests")
        result("http_get_per_sec", "failed", "req/s")
        return
    }
    result("http_get_per_sec", Double(count) / seconds, "req/s")
    result("http_get_count", "\(count)", "requests")
    result("http_get_window", "\(window)", "requests")
    result("http_get_seconds", seconds, "s", decimals: 3)
    result("http_get_peak_rss", "\(peakRSS())", "bytes")
}

/// 6. A large body fetched by one data task with a completion handler (the whole body in memory as
/// one `Data`). Reports MB/s, peak RSS and peak RSS ÷ body size.
func benchHTTPData(url: URL, size: Int, timeout: Double) {
    let session = URLSession(configuration: .ephemeral, delegate: TrustingDelegate(), delegateQueue: nil)
    defer { session.finishTasksAndInvalidate() }
    let baseline = currentRSS()
    guard let (s, start) = fetchWithDataTask(url, on: session, checksStatus: true, timeout: timeout,
                                             name: "http_data") else { return }
    guard s.failed == 0, s.bytes == size else {
        note(s.failed > 0 ? "the data task failed: \(s.firstError ?? "?")" : "body has \(s.bytes) bytes, expected \(size)")
        result("http_data_mbps", "failed", "MB/s")
        return
    }
    reportTransfer("http_data", s, started: start, size: size, baseline: baseline)
}

/// 7. A large body fetched by a download task with a delegate that checks the temporary file's size
/// and moves it to `destination`, as an app would; timed until `didCompleteWithError`. With a
/// `background` identifier (Courier only) the same task runs in a background session: Courier's
/// transfer agent downloads it and the session hands the file to the delegate.
func benchHTTPDownload(url: URL, size: Int, destination: URL, timeout: Double, background: String?) {
    defer { try? FileManager.default.removeItem(at: destination) }
    let configuration: URLSessionConfiguration
    if let background {
        #if USE_COURIER
        configuration = .background(withIdentifier: background)
        #else
        // FoundationNetworking marks background(withIdentifier:) unavailable.
        note("background sessions are unavailable in FoundationNetworking (identifier \(background))")
        result("http_download_mbps", "unsupported", "MB/s")
        return
        #endif
    } else {
        configuration = .ephemeral
    }
    let probe = DownloadProbe(destination: destination)
    let session = URLSession(configuration: configuration, delegate: probe, delegateQueue: nil)
    defer { session.finishTasksAndInvalidate() }
    let baseline = currentRSS()

    let start = now()
    session.downloadTask(with: url).resume()
    guard probe.finished.wait(timeout: .now() + timeout) == .success else {
        result("http_download_mbps", "timeout", "MB/s")
        note("the download task did not complete within \(timeout) s")
        return
    }
    let s = probe.tally.snapshot
    if let problem = s.firstError {
        note("the download task failed: \(problem)")
        result("http_download_mbps", "failed", "MB/s")
        return
    }
    reportDownload("http_download", s, started: start, size: size, destination: destination, baseline: baseline)
}

/// 8. A file sent by an upload task (`uploadTask(with:fromFile:)`, method PUT) with a completion
/// handler; the server must answer 2xx after reading the whole body (for ftp: URLs, which have no
/// status, any response without an error: the body was stored). Reports MB/s and peak RSS.
func benchHTTPUpload(url: URL, file: String, timeout: Double) {
    guard let size = fileSize(file), size > 0 else {
        note("cannot read the size of \(file)")
        result("http_upload_mbps", "failed", "MB/s")
        return
    }
    let session = URLSession(configuration: .ephemeral, delegate: TrustingDelegate(), delegateQueue: nil)
    defer { session.finishTasksAndInvalidate() }
    var request = URLRequest(url: url)
    request.httpMethod = "PUT"
    request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
    let finished = DispatchSemaphore(value: 0)
    let tally = Tally()
    let baseline = currentRSS()

    let start = now()
    let task = session.uploadTask(with: request, fromFile: URL(fileURLWithPath: file)) { _, response, error in
        if let error {
            tally.failed(describe(error))
        } else if let code = statusCode(response), (200...299).contains(code) {
            tally.succeeded(bytes: 0)
        } else if response != nil, statusCode(response) == nil, !["http", "https"].contains(url.scheme?.lowercased() ?? "") {
            // ftp: a plain URLResponse (no status), delivered once the server has stored the body.
            tally.succeeded(bytes: 0)
        } else {
            tally.failed("status \(statusCode(response).map(String.init) ?? "none")")
        }
        tally.state.withLock { $0.finishedAt = now() }
        finished.signal()
    }
    task.resume()
    guard finished.wait(timeout: .now() + timeout) == .success else {
        result("http_upload_mbps", "timeout", "MB/s")
        note("the upload task did not complete within \(timeout) s")
        return
    }
    let s = tally.snapshot
    if s.failed > 0 {
        note("the upload task failed: \(s.firstError ?? "?")")
        result("http_upload_mbps", isUnsupportedURL(s.firstError ?? "") ? "unsupported" : "failed", "MB/s")
        return
    }
    let seconds = Double(s.finishedAt - start) / 1e9
    let peak = peakRSS()
    result("http_upload_mbps", Double(size) / seconds / 1e6, "MB/s")
    result("http_upload_seconds", seconds, "s", decimals: 3)
    result("http_upload_bytes", "\(size)", "bytes")
    result("http_upload_baseline_rss", "\(baseline)", "bytes")
    result("http_upload_peak_rss", "\(peak)", "bytes")
    result("http_upload_rss_ratio", Double(peak) / Double(size), "x", decimals: 3)
}
