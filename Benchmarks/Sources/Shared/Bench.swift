// Courier's benchmark. This one file is compiled twice:
//   bench-courier     with USE_COURIER defined, against Courier;
//   bench-foundation  without it, against swift-corelibs-foundation's FoundationNetworking.
// It uses Apple's API only (URLSession, data and download tasks, completion handlers, a delegate),
// so the import below is the only difference between the two programs.
//
// Usage: bench-<impl> <measurement> [options]
//   data-tasks     [--count N] [--window N]   data: URL tasks per second on one session
//   latency        [--count N]                create+resume+complete latency of one data: task
//   file-data      --file PATH                file: URL fetched by a data task (MB/s, peak RSS)
//   file-download  --file PATH                file: URL fetched by a download task (MB/s, peak RSS)
//   file-read      --file PATH                reference: the file read by Data(contentsOf:)
//   http-get       --url URL [--count N] [--window N] [--size BYTES] [--async 1]
//                                             small GETs per second over keep-alive (window 1:
//                                             sequential); --size is the expected body size
//   http-data      --url URL --size BYTES     a large body fetched by one data task (MB/s, peak RSS)
//   http-download  --url URL --size BYTES --file PATH
//                                             a large body fetched by a download task, moved to PATH
//   http-upload    --url URL --file PATH      PATH sent by an upload task (PUT; MB/s, peak RSS)
//                                             http-download and http-upload also take ftp: URLs
//                   [--background IDENTIFIER]  http-download only, Courier only: the same download
//                                             task in URLSessionConfiguration.background(withIdentifier:)
//                                             (carried out by Courier's transfer agent; set
//                                             COURIER_AGENT_PATH when courier-agent is not next to
//                                             this binary)
//   info                                      which implementation this binary uses
// https: Courier accepts the server's certificate by answering the server-trust challenge with
// URLCredential(trust:). FoundationNetworking has no server-trust challenge on Linux: it trusts
// what its libcurl's CA bundle trusts (Benchmarks/run.sh shows it the test certificate there).
// Common option: --timeout SECONDS (default 300): a measurement that has not finished by then
// reports "timeout" instead of hanging.
//
// Output: machine-readable lines `RESULT <name> <value> <unit>` on standard output (value may be
// `unsupported`, `timeout` or `failed`), and `NOTE <text>` lines for humans. MB is 10^6 bytes.
// The exit status is 0 when the measurement ran (even when it reported `unsupported`).

#if USE_COURIER
import Courier
#else
import FoundationNetworking
#endif
import Foundation
import Dispatch
import Synchronization

// MARK: - Output and measuring helpers

#if USE_COURIER
let implementation = "courier"
#else
let implementation = "foundation"
#endif

/// Writes one line to standard output, unbuffered, so that lines survive a crash that follows.
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func result(_ name: String, _ value: String, _ unit: String) {
    emit("RESULT \(name) \(value) \(unit)")
}

func result(_ name: String, _ value: Double, _ unit: String, decimals: Int = 1) {
    result(name, String(format: "%.\(decimals)f", value), unit)
}

func note(_ text: String) {
    emit("NOTE [\(implementation)] \(text)")
}

/// Monotonic nanoseconds.
func now() -> UInt64 {
    DispatchTime.now().uptimeNanoseconds
}

/// Peak resident set size of this process (VmHWM in /proc/self/status), in bytes.
func peakRSS() -> Int {
    statusField("VmHWM:")
}

/// Current resident set size of this process (VmRSS in /proc/self/status), in bytes.
func currentRSS() -> Int {
    statusField("VmRSS:")
}

func statusField(_ field: String) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix(field) {
        let parts = line.split(separator: " ", omittingEmptySubsequences: true)
        if parts.count >= 2, let kB = Int(parts[1]) { return kB * 1024 }
    }
    return 0
}

func describe(_ error: any Error) -> String {
    let ns = error as NSError
    return "\(ns.domain) \(ns.code): \(ns.localizedDescription)"
}

/// True for URLError.unsupportedURL (NSURLErrorDomain -1002): the implementation has no protocol
/// for the scheme. Any other error is a failure, not a missing feature.
func isUnsupportedURL(_ message: String) -> Bool {
    message.hasPrefix("\(NSURLErrorDomain) \(NSURLErrorUnsupportedURL):")
}

/// Thread-safe tallies filled in by completion handlers and delegate callbacks.
final class Tally: Sendable {
    struct State {
        var completed = 0
        var failed = 0
        var bytes = 0
        var firstError: String?
        var downloadedSize: Int?
        var movedTo: URL?
        var finishedAt: UInt64 = 0
    }

    let state = Mutex(State())

    func succeeded(bytes: Int) {
        state.withLock {
            $0.completed += 1
            $0.bytes += bytes
        }
    }

    func failed(_ message: String) {
        state.withLock {
            $0.completed += 1
            $0.failed += 1
            if $0.firstError == nil { $0.firstError = message }
        }
    }

    var snapshot: State { state.withLock { $0 } }
}

// MARK: - Options

struct Options {
    var command = ""
    var count: Int?
    var window: Int?
    var file: String?
    var url: URL?
    var size: Int?
    var timeout: Double = 300
    /// `--background IDENTIFIER`: run http-download in a background session with this identifier.
    var background: String?
    /// `--async 1`: http-get awaits `data(from:)` instead of using completion handlers (window 1 only).
    var async = false

    static func parse(_ arguments: [String]) -> Options? {
        var options = Options()
        var rest = arguments.makeIterator()
        guard let command = rest.next() else { return nil }
        options.command = command
        while let flag = rest.next() {
            guard let value = rest.next() else { return nil }
            switch flag {
            case "--count": guard let n = Int(value), n > 0 else { return nil }; options.count = n
            case "--window": guard let n = Int(value), n > 0 else { return nil }; options.window = n
            case "--file": options.file = value
            case "--url": guard let url = URL(string: value) else { return nil }; options.url = url
            case "--size": guard let n = Int(value), n > 0 else { return nil }; options.size = n
            case "--timeout": guard let s = Double(value), s > 0 else { return nil }; options.timeout = s
            case "--background": guard !value.isEmpty else { return nil }; options.background = value
            case "--async": options.async = value == "1"
            default: return nil
            }
        }
        return options
    }
}

// MARK: - Measurements

/// A small data: URL ("Hello, Courier!", base64) and the body it decodes to.
let dataURLString = "data:text/plain;base64,SGVsbG8sIENvdXJpZXIh"
let dataBody = Data("Hello, Courier!".utf8)

/// 1. N data: tasks on one session, at most `window` in flight (a sliding window: a new task is
/// created and resumed as soon as one completes). Reports tasks per second.
func benchDataTasks(count: Int, window: Int, timeout: Double) {
    guard let url = URL(string: dataURLString) else { return }
    let session = URLSession(configuration: .ephemeral)
    defer { session.finishTasksAndInvalidate() }

    func run(_ n: Int, tally: Tally) -> UInt64? {
        let slots = DispatchSemaphore(value: window)
        let group = DispatchGroup()
        let start = now()
        for _ in 0..<n {
            slots.wait()
            group.enter()
            let task = session.dataTask(with: url) { data, _, error in
                if let error {
                    tally.failed(describe(error))
                } else if let data, data == dataBody {
                    tally.succeeded(bytes: data.count)
                } else {
                    tally.failed("unexpected body: \(data?.count ?? -1) bytes")
                }
                slots.signal()
                group.leave()
            }
            task.resume()
        }
        guard group.wait(timeout: .now() + timeout) == .success else { return nil }
        return now() - start
    }

    // Warm-up: the first tasks pay for lazily created queues, threads and protocol lookups.
    let warmTally = Tally()
    guard run(min(1_000, count), tally: warmTally) != nil else {
        result("data_tasks_per_sec", "timeout", "tasks/s")
        note("warm-up did not finish within \(timeout) s: \(warmTally.snapshot.completed) completed")
        return
    }

    let tally = Tally()
    guard let elapsed = run(count, tally: tally) else {
        result("data_tasks_per_sec", "timeout", "tasks/s")
        note("\(tally.snapshot.completed) of \(count) tasks completed within \(timeout) s")
        return
    }
    let s = tally.snapshot
    let seconds = Double(elapsed) / 1e9
    if s.failed > 0 {
        note("\(s.failed) of \(count) tasks failed; first: \(s.firstError ?? "?")")
        result("data_tasks_failed", "\(s.failed)", "tasks")
    }
    if s.failed == count {
        result("data_tasks_per_sec", "failed", "tasks/s")
    } else {
        result("data_tasks_per_sec", Double(count - s.failed) / seconds, "tasks/s")
    }
    result("data_tasks_count", "\(count)", "tasks")
    result("data_tasks_window", "\(window)", "tasks")
    result("data_tasks_seconds", seconds, "s", decimals: 3)
    result("data_tasks_peak_rss", "\(peakRSS())", "bytes")
}

/// 2. Sequential data: tasks: the time from creating the task to its completion handler running,
/// one at a time. Reports the median and the 99th percentile in microseconds.
func benchLatency(count: Int, timeout: Double) {
    guard let url = URL(string: dataURLString) else { return }
    let session = URLSession(configuration: .ephemeral)
    defer { session.finishTasksAndInvalidate() }
    let finished = DispatchSemaphore(value: 0)
    let tally = Tally()
    let warmUp = min(200, count)
    var samples: [UInt64] = []
    samples.reserveCapacity(count)
    for i in 0..<(warmUp + count) {
        let start = now()
        let task = session.dataTask(with: url) { data, _, error in
            if let error {
                tally.failed(describe(error))
            } else if let data, data == dataBody {
                tally.succeeded(bytes: data.count)
            } else {
                tally.failed("unexpected body: \(data?.count ?? -1) bytes")
            }
            finished.signal()
        }
        task.resume()
        guard finished.wait(timeout: .now() + timeout) == .success else {
            result("latency_median_us", "timeout", "us")
            result("latency_p99_us", "timeout", "us")
            note("task \(i) did not complete within \(timeout) s")
            return
        }
        if i >= warmUp { samples.append(now() - start) }
    }
    let s = tally.snapshot
    if s.failed > 0 {
        note("\(s.failed) tasks failed; first: \(s.firstError ?? "?")")
        result("latency_failed", "\(s.failed)", "tasks")
    }
    samples.sort()
    let median = Double(samples[samples.count / 2]) / 1e3
    let p99Index = min(samples.count - 1, Int((Double(samples.count) * 0.99).rounded(.up)) - 1)
    let p99 = Double(samples[max(0, p99Index)]) / 1e3
    result("latency_median_us", median, "us")
    result("latency_p99_us", p99, "us")
    result("latency_min_us", Double(samples[0]) / 1e3, "us")
    result("latency_count", "\(samples.count)", "tasks")
}

func fileSize(_ path: String) -> Int? {
    guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return nil }
    return (attributes[.size] as? NSNumber)?.intValue
}

/// 3. A large file: URL fetched by a data task with a completion handler. Reports MB/s and the
/// peak RSS of the process, also as a multiple of the body size.
func benchFileData(path: String, timeout: Double) {
    guard let size = fileSize(path), size > 0 else {
        note("cannot read the size of \(path)")
        result("file_data_mbps", "failed", "MB/s")
        return
    }
    let url = URL(fileURLWithPath: path)
    let session = URLSession(configuration: .ephemeral)
    defer { session.finishTasksAndInvalidate() }
    let finished = DispatchSemaphore(value: 0)
    let tally = Tally()
    let baseline = currentRSS()

    let start = now()
    let task = session.dataTask(with: url) { data, _, error in
        if let error {
            tally.failed(describe(error))
        } else if let data {
            tally.succeeded(bytes: data.count)
        } else {
            tally.failed("no data and no error")
        }
        tally.state.withLock { $0.finishedAt = now() }
        finished.signal()
    }
    task.resume()
    guard finished.wait(timeout: .now() + timeout) == .success else {
        result("file_data_mbps", "timeout", "MB/s")
        note("the data task did not complete within \(timeout) s")
        return
    }
    let s = tally.snapshot
    if s.failed > 0 {
        // swift-corelibs-foundation has no file: protocol for URLSession: it answers with
        // URLError.unsupportedURL, reported as "unsupported"; any other error as "failed".
        note("the data task failed: \(s.firstError ?? "?")")
        let verdict = isUnsupportedURL(s.firstError ?? "") ? "unsupported" : "failed"
        result("file_data_mbps", verdict, "MB/s")
        result("file_data_peak_rss", verdict, "bytes")
        result("file_data_rss_ratio", verdict, "x")
        return
    }
    if s.bytes != size {
        note("body has \(s.bytes) bytes, the file \(size)")
        result("file_data_mbps", "failed", "MB/s")
        return
    }
    let seconds = Double(s.finishedAt - start) / 1e9
    let peak = peakRSS()
    result("file_data_mbps", Double(size) / seconds / 1e6, "MB/s")
    result("file_data_seconds", seconds, "s", decimals: 3)
    result("file_data_bytes", "\(size)", "bytes")
    result("file_data_baseline_rss", "\(baseline)", "bytes")
    result("file_data_peak_rss", "\(peak)", "bytes")
    result("file_data_rss_ratio", Double(peak) / Double(size), "x", decimals: 3)
}

/// A reference point, not a URLSession measurement: the same file read into memory with
/// `Data(contentsOf:)` (one allocation of the file's size, then read(2) into it). It shows what a
/// data task's in-memory body costs without any loading system around it.
func benchFileRead(path: String) {
    guard let size = fileSize(path), size > 0 else {
        note("cannot read the size of \(path)")
        result("file_read_mbps", "failed", "MB/s")
        return
    }
    let baseline = currentRSS()
    let start = now()
    let data: Data
    do {
        data = try Data(contentsOf: URL(fileURLWithPath: path))
    } catch {
        note("reading the file failed: \(describe(error))")
        result("file_read_mbps", "failed", "MB/s")
        return
    }
    let seconds = Double(now() - start) / 1e9
    guard data.count == size else {
        note("read \(data.count) bytes, the file has \(size)")
        result("file_read_mbps", "failed", "MB/s")
        return
    }
    let peak = peakRSS()
    result("file_read_mbps", Double(size) / seconds / 1e6, "MB/s")
    result("file_read_seconds", seconds, "s", decimals: 3)
    result("file_read_baseline_rss", "\(baseline)", "bytes")
    result("file_read_peak_rss", "\(peak)", "bytes")
    result("file_read_rss_ratio", Double(peak) / Double(size), "x", decimals: 3)
}

/// The download delegate: checks the size of the temporary file and moves it out of the way, as an
/// app would, then signals completion.
final class DownloadProbe: NSObject, URLSessionDownloadDelegate, Sendable {
    let destination: URL
    let tally = Tally()
    let finished = DispatchSemaphore(value: 0)

    init(destination: URL) {
        self.destination = destination
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        let size = fileSize(location.path)
        do {
            if FileManager.default.fileExists(atPath: destination.path) {
                try FileManager.default.removeItem(at: destination)
            }
            try FileManager.default.moveItem(at: location, to: destination)
            tally.state.withLock {
                $0.downloadedSize = size
                $0.movedTo = destination
            }
        } catch {
            tally.state.withLock {
                $0.downloadedSize = size
                $0.firstError = "moving the download failed: \(describe(error))"
            }
        }
    }

    func urlSession(_ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        answerServerTrust(challenge, completionHandler)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error {
            tally.failed(describe(error))
        } else if let code = statusCode(task.response), code != 200 {
            tally.failed("status \(code)")
        } else {
            tally.succeeded(bytes: 0)
        }
        tally.state.withLock { $0.finishedAt = now() }
        finished.signal()
    }
}

/// 4. The same file fetched by a download task with a delegate (which checks and moves the file).
/// Reports MB/s and peak RSS.
func benchFileDownload(path: String, timeout: Double) {
    guard let size = fileSize(path), size > 0 else {
        note("cannot read the size of \(path)")
        result("file_download_mbps", "failed", "MB/s")
        return
    }
    let url = URL(fileURLWithPath: path)
    let destination = URL(fileURLWithPath: path + ".download-\(ProcessInfo.processInfo.processIdentifier)")
    defer { try? FileManager.default.removeItem(at: destination) }
    let probe = DownloadProbe(destination: destination)
    let session = URLSession(configuration: .ephemeral, delegate: probe, delegateQueue: nil)
    defer { session.finishTasksAndInvalidate() }
    let baseline = currentRSS()

    let start = now()
    session.downloadTask(with: url).resume()
    guard probe.finished.wait(timeout: .now() + timeout) == .success else {
        result("file_download_mbps", "timeout", "MB/s")
        note("the download task did not complete within \(timeout) s")
        return
    }
    let s = probe.tally.snapshot
    if s.failed > 0 {
        note("the download task failed: \(s.firstError ?? "?")")
        let verdict = isUnsupportedURL(s.firstError ?? "") ? "unsupported" : "failed"
        result("file_download_mbps", verdict, "MB/s")
        result("file_download_peak_rss", verdict, "bytes")
        result("file_download_rss_ratio", verdict, "x")
        return
    }
    if let problem = s.firstError {
        note(problem)
        result("file_download_mbps", "failed", "MB/s")
        return
    }
    guard s.movedTo != nil, s.downloadedSize == size, fileSize(destination.path) == size else {
        note("downloaded file: \(s.downloadedSize.map(String.init) ?? "missing") bytes, expected \(size)")
        result("file_download_mbps", "failed", "MB/s")
        return
    }
    let seconds = Double(s.finishedAt - start) / 1e9
    let peak = peakRSS()
    result("file_download_mbps", Double(size) / seconds / 1e6, "MB/s")
    result("file_download_seconds", seconds, "s", decimals: 3)
    result("file_download_bytes", "\(size)", "bytes")
    result("file_download_baseline_rss", "\(baseline)", "bytes")
    result("file_download_peak_rss", "\(peak)", "bytes")
    result("file_download_rss_ratio", Double(peak) / Double(size), "x", decimals: 3)
}

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
    let finished = DispatchSemaphore(value: 0)
    let tally = Tally()
    let baseline = currentRSS()

    let start = now()
    let task = session.dataTask(with: url) { data, response, error in
        if let error {
            tally.failed(describe(error))
        } else if statusCode(response) != 200 {
            tally.failed("status \(statusCode(response).map(String.init) ?? "none")")
        } else if let data {
            tally.succeeded(bytes: data.count)
        } else {
            tally.failed("no data and no error")
        }
        tally.state.withLock { $0.finishedAt = now() }
        finished.signal()
    }
    task.resume()
    guard finished.wait(timeout: .now() + timeout) == .success else {
        result("http_data_mbps", "timeout", "MB/s")
        note("the data task did not complete within \(timeout) s")
        return
    }
    let s = tally.snapshot
    guard s.failed == 0, s.bytes == size else {
        note(s.failed > 0 ? "the data task failed: \(s.firstError ?? "?")" : "body has \(s.bytes) bytes, expected \(size)")
        result("http_data_mbps", "failed", "MB/s")
        return
    }
    let seconds = Double(s.finishedAt - start) / 1e9
    let peak = peakRSS()
    result("http_data_mbps", Double(size) / seconds / 1e6, "MB/s")
    result("http_data_seconds", seconds, "s", decimals: 3)
    result("http_data_bytes", "\(size)", "bytes")
    result("http_data_baseline_rss", "\(baseline)", "bytes")
    result("http_data_peak_rss", "\(peak)", "bytes")
    result("http_data_rss_ratio", Double(peak) / Double(size), "x", decimals: 3)
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
    guard s.movedTo != nil, s.downloadedSize == size, fileSize(destination.path) == size else {
        note("downloaded file: \(s.downloadedSize.map(String.init) ?? "missing") bytes, expected \(size)")
        result("http_download_mbps", "failed", "MB/s")
        return
    }
    let seconds = Double(s.finishedAt - start) / 1e9
    let peak = peakRSS()
    result("http_download_mbps", Double(size) / seconds / 1e6, "MB/s")
    result("http_download_seconds", seconds, "s", decimals: 3)
    result("http_download_bytes", "\(size)", "bytes")
    result("http_download_baseline_rss", "\(baseline)", "bytes")
    result("http_download_peak_rss", "\(peak)", "bytes")
    result("http_download_rss_ratio", Double(peak) / Double(size), "x", decimals: 3)
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

// MARK: - Entry point

@main
struct Bench {
    static let usage = """
        usage: bench-\(implementation) <measurement> [options]
          data-tasks     [--count N (20000)] [--window N (256)]
          latency        [--count N (2000)]
          file-data      --file PATH
          file-download  --file PATH
          file-read      --file PATH   (reference: Data(contentsOf:), no URLSession)
          http-get       --url URL [--count N (5000)] [--window N (1)] [--size BYTES] [--async 1]
          http-data      --url URL --size BYTES
          http-download  --url URL --size BYTES --file DESTINATION [--background IDENTIFIER]
          http-upload    --url URL --file PATH
          info
        every measurement also takes --timeout SECONDS (300)
        """

    static func main() {
        guard let options = Options.parse(Array(CommandLine.arguments.dropFirst())) else {
            FileHandle.standardError.write(Data((usage + "\n").utf8))
            exit(2)
        }
        switch options.command {
        case "info":
            result("implementation", implementation, "-")
        case "data-tasks":
            benchDataTasks(count: options.count ?? 20_000, window: options.window ?? 256, timeout: options.timeout)
        case "latency":
            benchLatency(count: options.count ?? 2_000, timeout: options.timeout)
        case "file-data", "file-download", "file-read":
            guard let file = options.file else {
                FileHandle.standardError.write(Data((usage + "\n").utf8))
                exit(2)
            }
            if options.command == "file-data" {
                benchFileData(path: file, timeout: options.timeout)
            } else if options.command == "file-read" {
                benchFileRead(path: file)
            } else {
                benchFileDownload(path: file, timeout: options.timeout)
            }
        case "http-get":
            guard let url = options.url else { usageError() }
            guard !options.async || (options.window ?? 1) == 1 else { usageError() }
            benchHTTPGet(url: url, count: options.count ?? 5_000, window: options.window ?? 1,
                         expectedSize: options.size, timeout: options.timeout, async: options.async)
        case "http-data":
            guard let url = options.url, let size = options.size else { usageError() }
            benchHTTPData(url: url, size: size, timeout: options.timeout)
        case "http-download":
            guard let url = options.url, let size = options.size, let file = options.file else { usageError() }
            benchHTTPDownload(url: url, size: size, destination: URL(fileURLWithPath: file), timeout: options.timeout,
                              background: options.background)
        case "http-upload":
            guard let url = options.url, let file = options.file else { usageError() }
            benchHTTPUpload(url: url, file: file, timeout: options.timeout)
        default:
            usageError()
        }
    }

    static func usageError() -> Never {
        FileHandle.standardError.write(Data((usage + "\n").utf8))
        exit(2)
    }
}
