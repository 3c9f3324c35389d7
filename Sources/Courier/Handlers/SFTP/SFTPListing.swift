internal import CSSH2
import Foundation

/// Lists one remote directory (a URL ending in `/`): the body is ``URLDirectoryListing``'s format,
/// one JSON line per entry (`.` and `..` left out), streamed in batches as the server sends names.
/// A symbolic link's destination is read with one extra request per link. A listing past
/// ``DirectoryListingLimits`` (entries, or bytes of body) fails with `dataLengthExceedsMaximum`.
final class SFTPListing: SFTPJob, @unchecked Sendable {
    /// Lines are delivered in batches of about this many bytes.
    static let batchSize = 64 << 10
    private static let nameCapacity = 4096

    private enum Phase {
        case open
        case read
        case readLink(URLDirectoryEntry)
        case close
        case done
    }

    private var phase = Phase.open
    private var pendingLines = Data()
    private var callPending = false
    private var entryCount = 0
    private var bodyBytes = 0
    /// The caps this listing runs under.
    private let caps: DirectoryListingCaps

    init(url: URL, path: String, key: SSHConnectionKey, handler: SFTPURLProtocol, caps: DirectoryListingCaps) {
        self.caps = caps
        super.init(url: url, path: path, key: key, handler: handler)
    }

    override func step(sftp: OpaquePointer, session: OpaquePointer, isOutboundOwner: Bool) -> Step {
        switch phase {
        case .open:
            if isCancelled { return finish() }
            if metrics.requestStart == nil { metrics.requestStart = Date() }
            guard let opened = courier_ssh2_sftp_opendir(sftp, path) else {
                let step = failedCall(libssh2_session_last_errno(session), sftp: sftp, operation: .list, cleanAfterStatus: true)
                if case .finished = step { phase = .done }
                return step
            }
            handle = opened
            hasStarted = true
            metrics.responseStart = Date()
            reporter?.jobDidReceive(URLResponse(url: url, mimeType: URLDirectoryListing.mimeType, expectedContentLength: -1,
                                                textEncodingName: "utf-8"))
            phase = .read
            return .progressed
        case .read:
            return readEntry(sftp: sftp, isOutboundOwner: isOutboundOwner)
        case .readLink(let entry):
            return readLink(of: entry, sftp: sftp)
        case .close:
            guard let handle else { return finish() }
            let result = libssh2_sftp_close_handle(handle)
            if result == LIBSSH2_ERROR_EAGAIN { return .blocked }
            self.handle = nil
            if result < 0 && result != LIBSSH2_ERROR_SFTP_PROTOCOL { return .sessionFailed(result) }
            return finish()
        case .done:
            return .finished(reusable: true)
        }
    }

    private func readEntry(sftp: OpaquePointer, isOutboundOwner: Bool) -> Step {
        guard let handle else { return finish() }
        if isCancelled && !callPending && !isOutboundOwner {
            phase = .close
            return .progressed
        }
        if !isCancelled && !isOutboundOwner && !callPending && !canAcceptMoreData { return .idle }
        var name = [CChar](repeating: 0, count: Self.nameCapacity)
        var attributes = LIBSSH2_SFTP_ATTRIBUTES()
        let length = libssh2_sftp_readdir_ex(handle, &name, Self.nameCapacity, nil, 0, &attributes)
        if length == LIBSSH2_ERROR_EAGAIN {
            callPending = true
            flush()
            return .blocked
        }
        callPending = false
        if length < 0 {
            flush()
            let step = failedCall(length, sftp: sftp, operation: .list, cleanAfterStatus: true)
            if case .finished = step {
                phase = .close
                return .progressed
            }
            return step
        }
        if length == 0 {
            flush()
            succeed()
            phase = .close
            return .progressed
        }
        let entryName = String(decoding: name.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard entryName != ".", entryName != "..", !entryName.contains("/") else { return .progressed }
        let entry = Self.entry(named: entryName, attributes: attributes)
        if entry.type == .symbolicLink {
            phase = .readLink(entry)
            return .progressed
        }
        return append(entry)
    }

    private func readLink(of entry: URLDirectoryEntry, sftp: OpaquePointer) -> Step {
        var target = [CChar](repeating: 0, count: Self.nameCapacity)
        let childPath = SFTPRemotePath.child(entry.name, of: path)
        let length = courier_ssh2_sftp_readlink(sftp, childPath, &target, UInt32(Self.nameCapacity))
        if length == LIBSSH2_ERROR_EAGAIN { return .blocked }
        if length < 0 && length != LIBSSH2_ERROR_SFTP_PROTOCOL { return .sessionFailed(length) }
        var resolved = entry
        if length > 0 {
            resolved.symbolicLinkDestination = String(decoding: target.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        phase = .read
        return append(resolved)
    }

    /// Adds an entry's line, or fails the listing once it crosses ``DirectoryListingLimits``.
    private func append(_ entry: URLDirectoryEntry) -> Step {
        let line = URLDirectoryListing.encodeLine(entry)
        entryCount += 1
        bodyBytes += line.count
        var exceeded: URLError?
        if entryCount > caps.maximumEntries {
            exceeded = DirectoryListingLimits.tooManyEntries(maximum: caps.maximumEntries, url: url)
        } else if bodyBytes > caps.maximumBytes {
            exceeded = DirectoryListingLimits.tooManyBytes(maximum: caps.maximumBytes, url: url)
        }
        if let exceeded {
            flush()
            fail(exceeded)
            phase = .close
            return .progressed
        }
        pendingLines.append(line)
        if pendingLines.count >= Self.batchSize { flush() }
        return .progressed
    }

    private func flush() {
        guard !pendingLines.isEmpty else { return }
        metrics.bytesReceived += Int64(pendingLines.count)
        reporter?.jobDidLoad(pendingLines)
        pendingLines = Data()
    }

    private func finish() -> Step {
        phase = .done
        return .finished(reusable: true)
    }

    /// The entry for a name and the attributes the server sent with it.
    static func entry(named name: String, attributes: LIBSSH2_SFTP_ATTRIBUTES) -> URLDirectoryEntry {
        let flags = Int32(truncatingIfNeeded: attributes.flags)
        var type = URLDirectoryEntry.EntryType.other
        var permissions: UInt16?
        if flags & LIBSSH2_SFTP_ATTR_PERMISSIONS != 0 {
            let mode = Int32(truncatingIfNeeded: attributes.permissions)
            switch mode & LIBSSH2_SFTP_S_IFMT {
            case LIBSSH2_SFTP_S_IFREG: type = .file
            case LIBSSH2_SFTP_S_IFDIR: type = .directory
            case LIBSSH2_SFTP_S_IFLNK: type = .symbolicLink
            default: type = .other
            }
            permissions = UInt16(truncatingIfNeeded: mode & 0o7777)
        }
        let size: Int64? = flags & LIBSSH2_SFTP_ATTR_SIZE != 0 ? Int64(clamping: attributes.filesize) : nil
        let modified: Date? = flags & LIBSSH2_SFTP_ATTR_ACMODTIME != 0
            ? Date(timeIntervalSince1970: TimeInterval(attributes.mtime)) : nil
        return URLDirectoryEntry(name: name, type: type, size: size, modificationDate: modified, permissions: permissions)
    }
}
