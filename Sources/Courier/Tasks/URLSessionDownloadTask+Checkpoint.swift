import Foundation

extension URLSessionDownloadTask {
    /// Resume data for the bytes written so far, taken while the download keeps running: the
    /// transfer agent stores it every few MiB, so that after a crash it continues from there
    /// (`Documentation/Background.md`). `nil` when nothing was written yet or the handler cannot
    /// resume. The bytes named are on disk when this returns (`write` has returned for them).
    package func checkpointResumeData() -> Data? {
        makeResumeData(closingFile: false)
    }
}
