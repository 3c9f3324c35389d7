import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Moves a finished background download out of the agent's directory into the app's temporary
/// directory, where `didFinishDownloadingTo` gets it.
///
/// The destination's name is fixed by the session identifier and the task, so when the app dies
/// between the move and its acknowledgement, the event delivered again finds the file where the
/// first delivery put it. The move is a `rename` on the same filesystem, else a copy that is
/// written, synced and renamed into place before the agent's file is removed.
enum BackgroundFileHandoff {
    /// The file the delegate gets for `task` of `session`.
    static func destination(session: String, task: Int) -> URL {
        let safe = session.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) ? String($0) : "_" }.joined()
        return FileManager.default.temporaryDirectory
            .appendingPathComponent("CFNetworkDownload_bg-\(safe.prefix(64))-\(task).tmp")
    }

    /// Moves `source` (the agent's file) to the task's destination and returns it.
    static func take(_ source: String?, session: String, task: Int, url: URL?) throws(URLError) -> URL {
        let destination = destination(session: session, task: task)
        guard let source else {
            throw URLError(.cannotOpenFile, url: url, description: "The transfer agent reported a download without its file.")
        }
        if rename(source, destination.path) == 0 { return destination }
        let renameError = errno
        if renameError == ENOENT, FileManager.default.fileExists(atPath: destination.path) { return destination }
        guard renameError == EXDEV else {
            throw URLError(.cannotMoveFile, url: url,
                           description: "The finished download \(source) cannot be moved to \(destination.path): \(String(cString: strerror(renameError))).")
        }
        let partial = destination.path + ".partial"
        do {
            try? FileManager.default.removeItem(atPath: partial)
            try FileManager.default.copyItem(atPath: source, toPath: partial)
        } catch {
            throw URLError(.cannotMoveFile, url: url, description: "The finished download cannot be copied to \(partial): \(error.localizedDescription)")
        }
        let fd = open(partial, O_RDONLY | O_CLOEXEC)
        if fd >= 0 { fsync(fd); close(fd) }
        guard rename(partial, destination.path) == 0 else {
            throw URLError(.cannotMoveFile, url: url, description: "The finished download cannot be moved to \(destination.path).")
        }
        unlink(source)
        return destination
    }
}
