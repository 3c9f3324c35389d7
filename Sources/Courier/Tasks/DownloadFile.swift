import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The temporary file a download task writes its body into as the bytes arrive.
///
/// Created in the temporary directory with a unique name, readable only by its owner. Chunks are
/// written by the file's own serial writer queue (`courier.download`), in the order they were
/// handed over, so the thread that receives them (a handler's event loop) never waits for the disk;
/// the task bounds what is queued through back-pressure (``bytesQueued``), so
/// memory stays flat for any size. The file is handed to the delegate or completion handler when the
/// task finishes (after ``waitForWrites()``) and removed afterwards unless it was moved, or kept for
/// resume data when the download is cancelled for resuming.
final class DownloadFile: @unchecked Sendable {
    /// Where the file is.
    let url: URL
    /// The open file (-1 once closed). Used only on ``writer`` after `init` (writes, truncation,
    /// closing) and in `deinit`; read and set under ``lock``, but the system calls on it are made
    /// without the lock, so no write holds one.
    private var descriptor: Int32
    /// Guards ``descriptor``, ``written``, ``accepted`` and ``failure``; a leaf, held only to read or
    /// set them.
    private let lock = Lock()
    /// Bytes in the file: the writer adds to it while the task may read it (resume data).
    private var written: Int64
    /// Bytes handed over to be written, queued ones included.
    private var accepted: Int64
    /// The first write that failed; later queued writes are skipped.
    private var failure: URLError?
    /// Runs the writes, one at a time, in the order they were handed over.
    private let writer = DispatchQueue(label: "courier.download", target: .global())

    /// The bytes in the file so far (queued writes not counted: call ``waitForWrites()`` first to
    /// count them all).
    var bytesWritten: Int64 { lock.withLock { written } }

    /// The bytes handed over so far, written or queued: what the file will hold.
    var bytesAccepted: Int64 { lock.withLock { accepted } }

    /// The bytes handed over and not yet written: what the task's back-pressure counts.
    var bytesQueued: Int { lock.withLock { Int(max(0, accepted - written)) } }

    /// The error of the first write that failed, if one did.
    var writeFailure: URLError? { lock.withLock { failure } }

    private init(url: URL, descriptor: Int32, bytesWritten: Int64) {
        self.url = url
        self.descriptor = descriptor
        self.written = bytesWritten
        self.accepted = bytesWritten
    }

    // No write is queued (each would hold the file), so the descriptor is closed here directly.
    deinit {
        let open = lock.withLock { descriptor }
        if open >= 0 { close(open) }
    }

    /// The name of every file Courier downloads into: this prefix, six letters or digits, the suffix.
    static let namePrefix = "CFNetworkDownload_"
    static let nameSuffix = ".tmp"

    /// The directory download files are made in.
    private static var directoryPath: String { FileManager.default.temporaryDirectory.path }

    /// Creates a new empty file in the temporary directory.
    static func create(for taskURL: URL?) throws(URLError) -> DownloadFile {
        let directory = directoryPath
        var template = Array("\(directory)/\(namePrefix)XXXXXX\(nameSuffix)".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemps($0.baseAddress!, Int32(nameSuffix.utf8.count)) }
        guard fd >= 0 else {
            throw URLError(.cannotCreateFile, url: taskURL,
                           description: "cannot create a temporary file in \(directory): \(String(cString: strerror(errno)))")
        }
        let path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return DownloadFile(url: URL(fileURLWithPath: path), descriptor: fd, bytesWritten: 0)
    }

    /// Opens an existing partial download to append to it (resuming), after checking its length.
    ///
    /// `path` comes from resume data, which an app may have stored anywhere, so it is trusted only
    /// when it names what ``create(for:)`` makes: a file directly in the download directory, with
    /// Courier's name, that is a regular file (not a symbolic link — it is opened with `O_NOFOLLOW`),
    /// owned by this user and with no other hard link. Anything else fails with `cannotOpenFile`
    /// before the file is changed; the file is then neither written, truncated nor removed.
    static func reopen(path: String, expectedLength: Int64, for taskURL: URL?) throws(URLError) -> DownloadFile {
        func refuse(_ reason: String) -> URLError {
            URLError(.cannotOpenFile, url: taskURL, description: "the partial download \(path) \(reason); it cannot be resumed")
        }
        guard isDownloadFilePath(path) else { throw refuse("is not a download file Courier made") }
        var named = stat()
        guard lstat(path, &named) == 0 else { throw refuse(errno == ENOENT ? "is gone" : String(cString: strerror(errno))) }
        guard named.st_mode & S_IFMT == S_IFREG else { throw refuse("is not a regular file") }
        // O_NONBLOCK: should the name be swapped for a FIFO after the check, opening does not wait.
        let fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { throw refuse(errno == ELOOP ? "is a symbolic link" : String(cString: strerror(errno))) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_dev == named.st_dev, info.st_ino == named.st_ino,
              info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid(), info.st_nlink == 1 else {
            close(fd)
            throw refuse("is not a regular file of this user's with a single link")
        }
        guard Int64(info.st_size) >= expectedLength,
              ftruncate(fd, off_t(expectedLength)) == 0,
              lseek(fd, off_t(expectedLength), SEEK_SET) >= 0 else {
            close(fd)
            throw URLError(.cannotOpenFile, url: taskURL, description: "the partial download \(path) is shorter than its resume data says")
        }
        return DownloadFile(url: URL(fileURLWithPath: path), descriptor: fd, bytesWritten: expectedLength)
    }

    /// Whether `path` is spelled exactly as the resume data of a file ``create(for:)`` made spells
    /// it: the download directory, a slash, and a name of Courier's pattern (so no `..`, no
    /// subdirectory).
    static func isDownloadFilePath(_ path: String) -> Bool {
        guard let slash = path.lastIndex(of: "/") else { return false }
        let name = path[path.index(after: slash)...]
        guard name.hasPrefix(namePrefix), name.hasSuffix(nameSuffix),
              path == URL(fileURLWithPath: "\(directoryPath)/\(name)").path else { return false }
        let unique = name.utf8.dropFirst(namePrefix.utf8.count).dropLast(nameSuffix.utf8.count)
        return unique.count == 6 && unique.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
        }
    }

    /// Queues `data` to be appended by the writer queue, after every chunk handed over before it;
    /// `finished` runs there once it is written (`nil`) or failed (`cannotWriteToFile`). Never waits.
    func append(_ data: Data, for taskURL: URL?, then finished: @escaping @Sendable (URLError?) -> Void) {
        lock.withLock { accepted += Int64(data.count) }
        writer.async { [self] in
            finished(writeNow(data, for: taskURL))
        }
    }

    /// Appends `data` before returning, after the queued chunks; throws `cannotWriteToFile` when the
    /// disk refuses. Call with no lock held.
    func write(_ data: Data, for taskURL: URL?) throws(URLError) {
        lock.withLock { accepted += Int64(data.count) }
        if let failure = writer.sync(execute: { writeNow(data, for: taskURL) }) { throw failure }
    }

    /// Returns once every write handed over before is done. Call with no lock held: a write's
    /// `finished` may take the task's lock.
    func waitForWrites() {
        writer.sync {}
    }

    /// Writes `data` at the end of the file (on the writer queue); the error, kept for later chunks
    /// too, so nothing is written after a gap.
    private func writeNow(_ data: Data, for taskURL: URL?) -> URLError? {
        let (descriptor, failed) = lock.withLock { (self.descriptor, failure) }
        if let failed { return failed }
        let code: Int32? = descriptor < 0 ? EBADF : data.withUnsafeBytes { raw -> Int32? in
            var offset = 0
            while offset < raw.count {
                guard let base = raw.baseAddress else { return nil }
                let n = Glibc.write(descriptor, base + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += n
            }
            return nil
        }
        guard let code else {
            lock.withLock { written += Int64(data.count) }
            return nil
        }
        let error = URLError(.cannotWriteToFile, url: taskURL,
                             description: "cannot write the download to \(url.path): \(String(cString: strerror(code)))")
        return lock.withLock {
            if failure == nil { failure = error }
            return failure
        }
    }

    /// Starts over from an empty file (the server could not resume), after the queued writes.
    func truncate() {
        lock.withLock { accepted = 0 }
        writer.async { [self] in
            let descriptor = lock.withLock { self.descriptor }
            guard descriptor >= 0 else { return }
            _ = ftruncate(descriptor, 0)
            _ = lseek(descriptor, 0, SEEK_SET)
            lock.withLock { written = 0 }
        }
    }

    /// Closes the file, keeping it on disk: after the queued writes, which are visible to readers
    /// of the file as soon as they are done.
    func finishWriting() { closeDescriptor() }

    /// Deletes the file and closes it after the queued writes.
    func remove() {
        unlink(url.path)
        closeDescriptor()
    }

    private func closeDescriptor() {
        writer.async { [self] in
            let open: Int32 = lock.withLock {
                defer { descriptor = -1 }
                return descriptor
            }
            if open >= 0 { close(open) }
        }
    }
}
