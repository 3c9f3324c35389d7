// The benchmark's data: and file: measurements (see Bench.swift).

#if USE_COURIER
import Courier
#else
import FoundationNetworking
#endif
import Foundation
import Dispatch
import Synchronization

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
                tally.recordDataBody(data, error)
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
            tally.recordDataBody(data, error)
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
    let baseline = currentRSS()
    guard let (s, start) = fetchWithDataTask(url, on: session, checksStatus: false, timeout: timeout,
                                             name: "file_data") else { return }
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
    reportTransfer("file_data", s, started: start, size: size, baseline: baseline)
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
    reportDownload("file_download", s, started: start, size: size, destination: destination, baseline: baseline)
}

/// Checks a finished download task's file (`s`, moved to `destination` by its ``DownloadProbe``)
/// and reports `<name>_mbps`, `_seconds`, `_bytes`, `_baseline_rss`, `_peak_rss` and `_rss_ratio`;
/// `<name>_mbps failed` when the file is missing or not `size` bytes.
func reportDownload(_ name: String, _ s: Tally.State, started start: UInt64, size: Int, destination: URL, baseline: Int) {
    guard s.movedTo != nil, s.downloadedSize == size, fileSize(destination.path) == size else {
        note("downloaded file: \(s.downloadedSize.map(String.init) ?? "missing") bytes, expected \(size)")
        result("\(name)_mbps", "failed", "MB/s")
        return
    }
    reportTransfer(name, s, started: start, size: size, baseline: baseline)
}

/// Reports a finished transfer of `size` bytes that started at `start` (`now()`), when the
/// process's RSS was `baseline`: `<name>_mbps`, `_seconds`, `_bytes`, `_baseline_rss`, `_peak_rss`
/// Runs one data task on `session` with a completion handler (the whole body in memory as one
/// `Data`), as measurements 3 and 6 do, and returns what it tallied and when it started; `nil`, after
/// reporting `name`_mbps as a timeout, when it did not complete within `timeout` seconds.
/// `checksStatus`: a response other than 200 counts as a failure (http).
func fetchWithDataTask(_ url: URL, on session: URLSession, checksStatus: Bool, timeout: Double,
                       name: String) -> (snapshot: Tally.State, started: UInt64)? {
    let finished = DispatchSemaphore(value: 0)
    let tally = Tally()
    let start = now()
    let task = session.dataTask(with: url) { data, response, error in
        if let error {
            tally.failed(describe(error))
        } else if checksStatus, statusCode(response) != 200 {
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
        result("\(name)_mbps", "timeout", "MB/s")
        note("the data task did not complete within \(timeout) s")
        return nil
    }
    return (tally.snapshot, start)
}

/// and `_rss_ratio` (peak RSS ÷ size).
func reportTransfer(_ name: String, _ s: Tally.State, started start: UInt64, size: Int, baseline: Int) {
    let seconds = Double(s.finishedAt - start) / 1e9
    let peak = peakRSS()
    result("\(name)_mbps", Double(size) / seconds / 1e6, "MB/s")
    result("\(name)_seconds", seconds, "s", decimals: 3)
    result("\(name)_bytes", "\(size)", "bytes")
    result("\(name)_baseline_rss", "\(baseline)", "bytes")
    result("\(name)_peak_rss", "\(peak)", "bytes")
    result("\(name)_rss_ratio", Double(peak) / Double(size), "x", decimals: 3)
}

extension Tally {
    /// Counts one `data:` task's outcome: success when its body is ``dataBody``.
    func recordDataBody(_ data: Data?, _ error: (any Error)?) {
        if let error {
            failed(describe(error))
        } else if let data, data == dataBody {
            succeeded(bytes: data.count)
        } else {
            failed("unexpected body: \(data?.count ?? -1) bytes")
        }
    }
}
