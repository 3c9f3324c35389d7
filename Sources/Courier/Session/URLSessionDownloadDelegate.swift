import Foundation

/// Events of download tasks. An optional method a task's own delegate does not implement goes to
/// the session's delegate.
public protocol URLSessionDownloadDelegate: URLSessionTaskDelegate {
    /// The download finished. The file at `location` exists only until this method returns: move or
    /// read it here. Required.
    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL)

    /// Bytes reached the file: `bytesWritten` since the last call, `totalBytesWritten` in all.
    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64)

    /// A download created from resume data continues at `fileOffset`.
    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64,
                    expectedTotalBytes: Int64)
}

extension URLSessionDownloadDelegate {
    /// Does nothing.
    public func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                           totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        DelegateFallthrough.defers(.wroteData, of: self)
    }

    /// Does nothing.
    public func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64,
                           expectedTotalBytes: Int64) {
        DelegateFallthrough.defers(.resumedAtOffset, of: self)
    }
}
