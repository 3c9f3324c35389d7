import Foundation
import Testing
@testable import Courier

/// The longest any wait in these tests lasts: sessions give up on a task after this long.
let pluginTestLimit: TimeInterval = 20

/// A session whose tasks end within ``pluginTestLimit`` whatever happens.
func makeSession(delegate: (any URLSessionDelegate)? = nil, requestTimeout: TimeInterval? = nil) -> URLSession {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForResource = pluginTestLimit
    if let requestTimeout { configuration.timeoutIntervalForRequest = requestTimeout }
    return URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
}

/// What a data task with a completion handler delivered.
struct Fetched: @unchecked Sendable {
    var data: Data?
    var response: URLResponse?
    var error: (any Error)?

    var urlError: URLError? { error as? URLError }
    var text: String { data.map { String(decoding: $0, as: UTF8.self) } ?? "" }
}

/// Runs a data task with a completion handler for `request` (the session's resource timeout bounds it).
func fetch(_ request: URLRequest, session: URLSession = makeSession()) async -> Fetched {
    await withCheckedContinuation { continuation in
        let task = session.dataTask(with: request) { data, response, error in
            continuation.resume(returning: Fetched(data: data, response: response, error: error))
        }
        task.resume()
    }
}

func fetch(_ url: URL, session: URLSession = makeSession()) async -> Fetched {
    await fetch(URLRequest(url: url), session: session)
}

/// Polls `condition` until it holds or `timeout` passes; returns whether it held.
@discardableResult
func waitUntil(timeout: TimeInterval = 10, _ condition: @Sendable () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        if Date() >= deadline { return false }
        try? await Task.sleep(nanoseconds: 10_000_000)
    }
    return true
}

/// A value behind a lock, shared between a test and callbacks.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    @discardableResult
    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
    var current: Value { withLock { $0 } }
}

/// A data and download delegate that records what it hears.
final class RecordingDelegate: NSObject, URLSessionDataDelegate, URLSessionDownloadDelegate, @unchecked Sendable {
    struct Record {
        var response: URLResponse?
        var chunks: [Int] = []
        var body = Data()
        /// (bytes written, total written, total expected) per `didWriteData`.
        var writes: [(Int64, Int64, Int64)] = []
        var resumedAt: (offset: Int64, expected: Int64)?
        var downloaded: Data?
        var error: (any Error)?
        var completed = false
    }

    let record = Locked(Record())
    /// Runs on the delegate queue after each `didWriteData` / `didReceive data`.
    var onProgress: (@Sendable (URLSessionTask) -> Void)?
    /// Runs on the delegate queue when a data task's response arrives, before it is allowed.
    var onResponse: (@Sendable (URLSessionTask) -> Void)?

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        record.withLock { $0.response = response }
        onResponse?(dataTask)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        record.withLock {
            $0.chunks.append(data.count)
            $0.body.append(data)
        }
        onProgress?(dataTask)
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        record.withLock { $0.writes.append((bytesWritten, totalBytesWritten, totalBytesExpectedToWrite)) }
        onProgress?(downloadTask)
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64,
                    expectedTotalBytes: Int64) {
        record.withLock { $0.resumedAt = (fileOffset, expectedTotalBytes) }
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        let content = try? Data(contentsOf: location)
        record.withLock {
            $0.downloaded = content
            $0.response = downloadTask.response
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        record.withLock {
            $0.error = error
            $0.completed = true
        }
    }

    /// Waits (bounded) for `didCompleteWithError`.
    func waitForCompletion() async -> Bool {
        await waitUntil(timeout: pluginTestLimit + 5) { [record] in record.current.completed }
    }
}
