import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The handler for `file:` URLs on this machine.
///
/// The body streams in 1 MiB chunks as the consumer takes them (the handler pauses while the task is
/// suspended or its delegate lags), so memory stays flat for any file size. The response carries the
/// MIME type from the file's extension and the file's size. Downloads can be resumed: the validator
/// is the file's size, modification time and inode, so a changed file restarts from zero.
///
/// A directory is listed: the body is a ``URLDirectoryListing`` (one JSON entry per line, MIME type
/// ``URLDirectoryListing/mimeType``), the same model the ftp and sftp handlers use.
///
/// Errors: a missing file → `fileDoesNotExist`, unreadable → `noPermissionsToReadFile`, a host other
/// than `localhost` → `unsupportedURL`.
///
/// Devices (character and block devices, sockets) are refused with `cannotOpenFile` before they are
/// opened: they are not files, and some never end (`/dev/zero`, `/dev/urandom`) or change state when
/// opened (terminals, tapes). A FIFO (named pipe) is read as it is written, without a size and without
/// resume; it is opened without waiting for a writer, so a FIFO nobody writes to is silence, and the
/// task's `timeoutIntervalForRequest` ends it like any other silent load.
final class FileURLProtocol: BuiltInURLProtocol, @unchecked Sendable {
    /// Bytes read per chunk.
    static let chunkSize = 1 << 20

    private let lock = Lock()
    private var descriptor: Int32 = -1
    private var stopped = false
    private var paused = false
    /// The file is a FIFO: reads wait for it to be readable (see ``waitUntilReadable(_:)``).
    private var isFIFO = false
    private let readQueue = DispatchQueue(label: "courier.file")

    override class func canInit(with request: URLRequest) -> Bool {
        request.url?.scheme?.lowercased() == "file"
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        guard let url = request.url else { return }
        if url.host.map({ $0.isEmpty || $0.lowercased() == "localhost" }) ?? true, !url.path.isEmpty,
           FileDirectoryListing.isDirectory(url.path) {
            deliverListing(of: url)
            return
        }
        switch Self.open(url) {
        case .failure(let error):
            client?.urlProtocol(self, didFailWithError: error)
        case .success(let opened):
            let started: Bool = lock.withLock {
                if stopped { return false }
                descriptor = opened.descriptor
                isFIFO = opened.isFIFO
                return true
            }
            guard started else { close(opened.descriptor); return }
            deliverResponse(for: url, opened: opened)
            readQueue.async { [self] in pump() }
        }
    }

    override func stopLoading() {
        let fd: Int32 = lock.withLock {
            stopped = true
            defer { descriptor = -1 }
            return descriptor
        }
        // Closing here could race a read on the queue; let the read loop close it.
        if fd >= 0 { readQueue.async { close(fd) } }
    }

    override func resumeProducing() {
        let wake: Bool = lock.withLock {
            guard paused, !stopped else { return false }
            paused = false
            return true
        }
        if wake { readQueue.async { [self] in pump() } }
    }

    private struct Opened {
        var descriptor: Int32
        /// The size, or -1 for a FIFO.
        var size: Int64
        /// The resume validator, or `nil` for a FIFO (which cannot be resumed).
        var validator: String?
        var isFIFO: Bool { validator == nil }
    }

    /// How long one wait for a FIFO to become readable lasts before the handler checks for a stop.
    private static let fifoWaitSliceMilliseconds: Int32 = 100

    private static func open(_ url: URL) -> Result<Opened, URLError> {
        if let host = url.host, !host.isEmpty, host.lowercased() != "localhost" {
            return .failure(URLError(.unsupportedURL, url: url, description: "file: URLs on another host (\(host)) are not supported."))
        }
        let path = url.path
        guard !path.isEmpty else { return .failure(URLError(.badURL, url: url, description: "The file: URL has no path.")) }
        // Look before opening: opening a device can have effects of its own.
        var before = stat()
        guard stat(path, &before) == 0 else { return .failure(error(errno: errno, url: url, path: path)) }
        if let refusal = refusal(ofType: before.st_mode, url: url, path: path) { return .failure(refusal) }
        // O_NONBLOCK: a FIFO opens at once, with or without a writer; regular files ignore it.
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { return .failure(error(errno: errno, url: url, path: path)) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            return .failure(error(errno: code, url: url, path: path))
        }
        // Checked again on what was opened: the path may have been replaced in between.
        if let refusal = refusal(ofType: info.st_mode, url: url, path: path) {
            close(fd)
            return .failure(refusal)
        }
        if (info.st_mode & S_IFMT) == S_IFIFO {
            return .success(Opened(descriptor: fd, size: -1, validator: nil))
        }
        let validator = "\(info.st_size)-\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)-\(info.st_ino)"
        return .success(Opened(descriptor: fd, size: Int64(info.st_size), validator: validator))
    }

    /// Why a file of type `mode` is not read, or `nil` for a regular file or a FIFO.
    private static func refusal(ofType mode: mode_t, url: URL, path: String) -> URLError? {
        switch mode & S_IFMT {
        case S_IFREG, S_IFIFO:
            return nil
        case S_IFDIR:
            return URLError(.fileIsDirectory, url: url, description: "\(path) is a directory.")
        case S_IFCHR, S_IFBLK:
            return URLError(.cannotOpenFile, url: url, description: "\(path) is a device, not a file; file: URLs do not read devices.")
        default:
            return URLError(.cannotOpenFile, url: url, description: "\(path) is not a regular file; file: URLs do not read it.")
        }
    }

    private static func error(errno code: Int32, url: URL, path: String) -> URLError {
        let reason = String(cString: strerror(code))
        switch code {
        case ENOENT, ENOTDIR:
            return URLError(.fileDoesNotExist, url: url, description: "The file \(path) does not exist.")
        case EACCES, EPERM:
            return URLError(.noPermissionsToReadFile, url: url, description: "No permission to read \(path).")
        case EISDIR:
            return URLError(.fileIsDirectory, url: url, description: "\(path) is a directory.")
        default:
            return URLError(.cannotOpenFile, url: url, description: "Cannot open \(path): \(reason).")
        }
    }

    /// Answers a directory URL with its listing.
    private func deliverListing(of url: URL) {
        let entries: [URLDirectoryEntry]
        do {
            entries = try FileDirectoryListing.entries(at: url.path)
        } catch {
            client?.urlProtocol(self, didFailWithError: Self.error(errno: error.code, url: url, path: url.path))
            return
        }
        let body = URLDirectoryListing.encode(entries)
        let response = URLResponse(url: url, mimeType: URLDirectoryListing.mimeType,
                                   expectedContentLength: body.count, textEncodingName: "utf-8")
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        if !body.isEmpty { client?.urlProtocol(self, didLoad: body) }
        client?.urlProtocolDidFinishLoading(self)
    }

    private func deliverResponse(for url: URL, opened: Opened) {
        let builtIn = client as? BuiltInHandlerClient
        if let validator = opened.validator { builtIn?.setResumeValidator(validator) }
        if let resume = ResumeRequest.parameters(of: request), let validator = opened.validator, resume.validator == validator,
           resume.offset <= opened.size, lseek(opened.descriptor, off_t(resume.offset), SEEK_SET) == off_t(resume.offset) {
            builtIn?.didResume(atOffset: resume.offset, expectedTotalBytes: opened.size)
        }
        let response = URLResponse(url: url, mimeType: MIMETypeTable.mimeType(forPathExtension: url.pathExtension),
                                   expectedContentLength: Int(opened.size), textEncodingName: nil)
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
    }

    /// Reads and delivers chunks until the end, a stop, or the consumer asks for a pause.
    private func pump() {
        let builtIn = client as? BuiltInHandlerClient
        while true {
            let next: (fd: Int32, isFIFO: Bool)? = lock.withLock {
                if stopped || descriptor < 0 { return nil }
                if let builtIn, !builtIn.canAcceptMoreData {
                    paused = true
                    return nil
                }
                return (descriptor, isFIFO)
            }
            guard let (fd, isFIFO) = next else { return }
            if isFIFO, !waitUntilReadable(fd) { return }
            guard let buffer = malloc(Self.chunkSize) else {
                finish(error: URLError(.cannotLoadFromNetwork, url: request.url, description: "Out of memory reading the file."))
                return
            }
            var count: Int
            repeat { count = read(fd, buffer, Self.chunkSize) } while count < 0 && errno == EINTR
            if count < 0 {
                let code = errno
                free(buffer)
                if code == EAGAIN { continue } // a FIFO whose data another reader took first
                let reason = String(cString: strerror(code))
                finish(error: URLError(.cannotOpenFile, url: request.url, description: "Reading \(request.url?.path ?? "the file") failed: \(reason)."))
                return
            }
            if count == 0 {
                free(buffer)
                finish(error: nil)
                return
            }
            let chunk = Data(bytesNoCopy: buffer, count: count, deallocator: .free)
            client?.urlProtocol(self, didLoad: chunk)
        }
    }

    /// Waits, in slices, until the FIFO `fd` has data or its writer has gone (`true`), or the load
    /// was stopped (`false`). A FIFO opened with `O_NONBLOCK` reads as ended while no writer has come
    /// yet, but `poll` waits for one: so a FIFO is polled before every read.
    private func waitUntilReadable(_ fd: Int32) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while true {
            if lock.withLock({ stopped }) { return false }
            entry.revents = 0
            let ready = poll(&entry, 1, Self.fifoWaitSliceMilliseconds)
            if ready > 0 { return true }
            if ready < 0, errno != EINTR { return true } // the read that follows reports the error
        }
    }

    private func finish(error: URLError?) {
        let fd: Int32? = lock.withLock {
            if stopped { return nil }
            stopped = true
            defer { descriptor = -1 }
            return descriptor
        }
        guard let fd else { return }
        close(fd)
        if let error {
            client?.urlProtocol(self, didFailWithError: error)
        } else {
            client?.urlProtocolDidFinishLoading(self)
        }
    }
}
