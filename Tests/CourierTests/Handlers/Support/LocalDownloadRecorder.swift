import Foundation
@testable import Courier

/// Records what a download task's delegate receives.
final class LocalDownloadRecorder: NSObject, URLSessionDownloadDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var _writes: [(written: Int64, total: Int64, expected: Int64)] = []
    private var _location: URL?
    private var _contentsMatched: Bool?
    private var _existedAfterFinish: Bool?
    private var _completed = false
    private var _error: (any Error)?
    private var _resumedAt: Int64?

    /// What the downloaded file must contain (checked inside `didFinishDownloadingTo`).
    let expected: Data?
    let onWrite: (@Sendable (_ total: Int64, _ task: URLSessionDownloadTask) -> Void)?

    init(expected: Data?, onWrite: (@Sendable (_ total: Int64, _ task: URLSessionDownloadTask) -> Void)? = nil) {
        self.expected = expected
        self.onWrite = onWrite
    }

    var writes: [(written: Int64, total: Int64, expected: Int64)] { lock.lock(); defer { lock.unlock() }; return _writes }
    var location: URL? { lock.lock(); defer { lock.unlock() }; return _location }
    var contentsMatched: Bool? { lock.lock(); defer { lock.unlock() }; return _contentsMatched }
    var existedAfterFinish: Bool? { lock.lock(); defer { lock.unlock() }; return _existedAfterFinish }
    var completed: Bool { lock.lock(); defer { lock.unlock() }; return _completed }
    var error: (any Error)? { lock.lock(); defer { lock.unlock() }; return _error }
    var resumedAt: Int64? { lock.lock(); defer { lock.unlock() }; return _resumedAt }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        lock.lock()
        _writes.append((bytesWritten, totalBytesWritten, totalBytesExpectedToWrite))
        lock.unlock()
        onWrite?(totalBytesWritten, downloadTask)
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64,
                    expectedTotalBytes: Int64) {
        lock.lock()
        _resumedAt = fileOffset
        lock.unlock()
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        let matched = expected.map { (try? Data(contentsOf: location)) == $0 }
        lock.lock()
        _location = location
        _contentsMatched = matched
        lock.unlock()
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        // didFinishDownloadingTo has returned: the temporary file must be gone by now.
        let existed = location.map { FileManager.default.fileExists(atPath: $0.path) }
        lock.lock()
        _existedAfterFinish = existed
        _error = error
        _completed = true
        lock.unlock()
    }
}
