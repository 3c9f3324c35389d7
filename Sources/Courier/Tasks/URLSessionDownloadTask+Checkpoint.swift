import Foundation

extension URLSessionDownloadTask {
    /// Resume data for the bytes written so far, taken while the download keeps running: the
    /// transfer agent stores it every few MiB, so that after a crash it continues from there
    /// (`Documentation/Background.md`). `nil` when nothing was written yet or the handler cannot
    /// resume. The bytes named are on disk when this returns (`write` has returned for them).
    package func checkpointResumeData() -> Data? {
        makeResumeData(closingFile: false)
    }

    /// The partial file that Courier resume data names, or `nil` when `resumeData` is not valid
    /// Courier resume data: the transfer agent keeps or removes the partial files of its tasks.
    package static func partialFilePath(ofResumeData resumeData: Data) -> String? {
        try? DownloadResumeData.decode(resumeData).partialFilePath
    }
}
