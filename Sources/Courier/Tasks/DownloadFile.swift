import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The temporary file a download task writes its body into as the bytes arrive.
///
/// Created in the temporary directory with a unique name, readable only by its owner. Bytes are
/// written straight from each chunk (no buffering), so memory stays flat for any size. The file is
/// handed to the delegate or completion handler when the task finishes and removed afterwards unless
/// it was moved, or kept for resume data when the download is cancelled for resuming.
final class DownloadFile: @unchecked Sendable {
    /// Where the file is.
    let url: URL
    private let lock = Lock()
    private var descriptor: Int32
    private(set) var bytesWritten: Int64

    private init(url: URL, descriptor: Int32, bytesWritten: Int64) {
        self.url = url
        self.descriptor = descriptor
        self.bytesWritten = bytesWritten
    }

    deinit { closeDescriptor() }

    /// Creates a new empty file in the temporary directory.
    static func create(for taskURL: URL?) throws(URLError) -> DownloadFile {
        let directory = FileManager.default.temporaryDirectory.path
        var template = Array("\(directory)/CFNetworkDownload_XXXXXX.tmp".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemps($0.baseAddress!, 4) }
        guard fd >= 0 else {
            throw URLError(.cannotCreateFile, url: taskURL,
                           description: "cannot create a temporary file in \(directory): \(String(cString: strerror(errno)))")
        }
        let path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return DownloadFile(url: URL(fileURLWithPath: path), descriptor: fd, bytesWritten: 0)
    }

    /// Opens an existing partial download to append to it (resuming), after checking its length.
    static func reopen(path: String, expectedLength: Int64, for taskURL: URL?) throws(URLError) -> DownloadFile {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw URLError(.cannotOpenFile, url: taskURL, description: "the partial download \(path) is gone")
        }
        var info = stat()
        guard fstat(fd, &info) == 0, Int64(info.st_size) >= expectedLength,
              ftruncate(fd, off_t(expectedLength)) == 0,
              lseek(fd, off_t(expectedLength), SEEK_SET) >= 0 else {
            close(fd)
            throw URLError(.cannotOpenFile, url: taskURL, description: "the partial download \(path) is shorter than its resume data says")
        }
        return DownloadFile(url: URL(fileURLWithPath: path), descriptor: fd, bytesWritten: expectedLength)
    }

    /// Appends `data`; throws `cannotWriteToFile` when the disk refuses.
    func write(_ data: Data, for taskURL: URL?) throws(URLError) {
        let failure: Int32? = lock.withLock {
            guard descriptor >= 0 else { return EBADF }
            let ok = data.withUnsafeBytes { raw -> Int32? in
                var offset = 0
                while offset < raw.count {
                    let n = Glibc.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                    if n < 0 {
                        if errno == EINTR { continue }
                        return errno
                    }
                    offset += n
                }
                return nil
            }
            if ok == nil { bytesWritten += Int64(data.count) }
            return ok
        }
        if let code = failure {
            throw URLError(.cannotWriteToFile, url: taskURL,
                           description: "cannot write the download to \(url.path): \(String(cString: strerror(code)))")
        }
    }

    /// Starts over from an empty file (the server could not resume).
    func truncate() {
        lock.withLock {
            guard descriptor >= 0 else { return }
            _ = ftruncate(descriptor, 0)
            _ = lseek(descriptor, 0, SEEK_SET)
            bytesWritten = 0
        }
    }

    /// Closes the file, keeping it on disk.
    func finishWriting() { closeDescriptor() }

    /// Closes and deletes the file.
    func remove() {
        closeDescriptor()
        unlink(url.path)
    }

    private func closeDescriptor() {
        lock.withLock {
            if descriptor >= 0 { close(descriptor) }
            descriptor = -1
        }
    }
}
