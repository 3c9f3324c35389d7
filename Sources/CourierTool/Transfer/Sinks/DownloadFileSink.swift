import Foundation

/// A file sink that can take the body as a finished download task's file instead of chunk by chunk.
///
/// For `-o FILE`, the fetch answers the response with `.becomeDownload` when the sink accepts it:
/// Courier's download task then writes each chunk into its temporary file on the thread that
/// receives it (for http, libcurl's loop thread), as `curl -o` does, instead of handing every chunk
/// to the delegate queue to be written there. When the download has finished, the sink renames that
/// file over its own temporary one; ``OutputSink/finish()`` and ``OutputSink/abort()`` then work as
/// for a body written chunk by chunk, so a failed load still leaves nothing behind.
protocol DownloadFileSink: OutputSink {
    /// Whether the body may come as a download file: nothing has been written yet (no `-i` headers)
    /// and the download directory is on the same file system as the target, so adopting the file is
    /// a rename, not a copy.
    var takesDownloadFile: Bool { get }

    /// Takes over the finished download file at `location` (called from `didFinishDownloadingTo`,
    /// before Courier removes the file).
    /// - Throws: ``OutputError`` when the file cannot be moved, or the sink has already ended.
    func adopt(downloadFile location: URL) throws
}
