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
final class FileURLProtocol: URLProtocol, DownloadResumingHandler, FlowControlledURLProtocol, @unchecked Sendable {
    static let schemes: [BuiltInScheme] = [.file]
    /// Bytes read per chunk.
    static let chunkSize = 1 << 20

    private let lock = Lock()
    private var descriptor: Int32 = -1
    private var stopped = false
    private var paused = false
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

    func resumeProducing() {
        let wake: Bool = lock.withLock {
            guard paused, !stopped else { return false }
            paused = false
            return true
        }
        if wake { readQueue.async { [self] in pump() } }
    }

    private struct Opened {
        var descriptor: Int32
        var size: Int64
        var validator: String
    }

    private static func open(_ url: URL) -> Result<Opened, URLError> {
        if let host = url.host, !host.isEmpty, host.lowercased() != "localhost" {
            return .failure(URLError(.unsupportedURL, url: url, description: "file: URLs on another host (\(host)) are not supported."))
        }
        let path = url.path
        guard !path.isEmpty else { return .failure(URLError(.badURL, url: url, description: "The file: URL has no path.")) }
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(error(errno: errno, url: url, path: path)) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            return .failure(error(errno: code, url: url, path: path))
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            close(fd)
            return .failure(URLError(.fileIsDirectory, url: url, description: "\(path) is a directory."))
        }
        let validator = "\(info.st_size)-\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)-\(info.st_ino)"
        return .success(Opened(descriptor: fd, size: Int64(info.st_size), validator: validator))
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
        builtIn?.setResumeValidator(opened.validator)
        if let resume = ResumeRequest.parameters(of: request), resume.validator == opened.validator,
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
            let fd: Int32? = lock.withLock {
                if stopped || descriptor < 0 { return nil }
                if let builtIn, !builtIn.canAcceptMoreData {
                    paused = true
                    return nil
                }
                return descriptor
            }
            guard let fd else { return }
            guard let buffer = malloc(Self.chunkSize) else {
                finish(error: URLError(.cannotLoadFromNetwork, url: request.url, description: "Out of memory reading the file."))
                return
            }
            var count: Int
            repeat { count = read(fd, buffer, Self.chunkSize) } while count < 0 && errno == EINTR
            if count < 0 {
                let reason = String(cString: strerror(errno))
                free(buffer)
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
