import CourierPluginKit
import Foundation
import ZIPFoundation

/// Serves `zip:` URLs: an entry's bytes, or a listing of a directory inside the archive.
///
/// - A file entry streams in 64 KiB chunks as the consumer takes them, with the entry's
///   uncompressed size as the expected length and a MIME type from its extension. Downloads can be
///   resumed: the validator is the archive's size and modification time and the entry's CRC-32.
/// - A directory (the root, a path ending in `/`, or a path that only prefixes entries) answers
///   with Courier's directory listing (``PluginDirectoryListing``: MIME type
///   `application/vnd.courier.directory-listing+jsonl`, one JSON entry per child, sorted by name),
///   which the host's `URLSession.directoryListing(from:)` decodes.
///
/// No archive can crash the host: before ZIPFoundation walks an archive, ``ZipCentralDirectory``
/// refuses one whose offsets or sizes would make it trap, and entry data is read by
/// ``ZipEntryReader`` within the entry's bounds.
///
/// Errors: archive or entry missing → `fileDoesNotExist`; the archive is a directory →
/// `fileIsDirectory`; unreadable → `noPermissionsToReadFile`; not a zip archive, or a malformed or
/// hostile one → `cannotDecodeRawData`; a corrupt entry → `cannotDecodeContentData`; a malformed URL →
/// `badURL`.
final class ZipEntryHandler: PluginHandler, @unchecked Sendable {
    /// Bytes per chunk.
    static let chunkSize = 64 * 1024

    private let lock = NSLock()
    private var stopped = false
    /// Signalled by stop and resume; the reader waits on it while the consumer lags.
    private let wake = DispatchSemaphore(value: 0)
    private let queue = DispatchQueue(label: "courier.zip")

    private struct Stopped: Error {}

    override func startLoading() {
        queue.async { [self] in load() }
    }

    override func stopLoading() {
        lock.withLock { stopped = true }
        wake.signal()
    }

    override func resumeProducing() {
        wake.signal()
    }

    private var isStopped: Bool { lock.withLock { stopped } }

    private func load() {
        guard let location = ZipURL(request.url) else {
            return client.didFail(.badURL, message: "\(request.url.absoluteString) is not a zip: URL of the form zip:///path/archive.zip!/entry.")
        }
        let archiveURL = URL(fileURLWithPath: location.archivePath)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: archiveURL.path, isDirectory: &isDirectory) else {
            return client.didFail(.fileDoesNotExist, message: "The archive \(archiveURL.path) does not exist.")
        }
        guard !isDirectory.boolValue else {
            return client.didFail(.fileIsDirectory, message: "\(archiveURL.path) is a directory, not a zip archive.")
        }
        guard FileManager.default.isReadableFile(atPath: archiveURL.path) else {
            return client.didFail(.noPermissionsToReadFile, message: "No permission to read \(archiveURL.path).")
        }
        let archive: Archive
        let directory: ZipCentralDirectory
        do {
            archive = try Archive(url: archiveURL, accessMode: .read)
        } catch {
            return client.didFail(.cannotDecodeRawData, message: "\(archiveURL.path) is not a zip archive.")
        }
        guard let reader = ZipFileReader(path: archiveURL.path) else {
            return client.didFail(.noPermissionsToReadFile, message: "\(archiveURL.path) cannot be opened.")
        }
        do {
            directory = try ZipCentralDirectory(reader)
            try directory.check()
        } catch {
            return client.didFail(.cannotDecodeRawData, message: "\(archiveURL.path) is not a usable zip archive: \(error.reason).")
        }
        if !location.namesDirectory, let (index, entry) = archive.enumerated().first(where: { $0.element.path == location.entryPath }),
           entry.type == .file {
            stream(entry, index: index, of: directory, reader: reader, at: archiveURL)
        } else {
            list(location, in: archive, directory: directory, reader: reader)
        }
    }

    /// Answers a directory with its children in Courier's listing format (see ``ZipDirectoryListing``).
    private func list(_ location: ZipURL, in archive: Archive, directory: ZipCentralDirectory, reader: ZipFileReader) {
        var prefix = location.entryPath
        if !prefix.isEmpty && !prefix.hasSuffix("/") { prefix += "/" }
        guard let entries = ZipDirectoryListing.entries(under: prefix, in: archive, directory: directory, reader: reader) else {
            return client.didFail(.fileDoesNotExist, message: "The archive has no entry \(location.entryPath).")
        }
        let body = PluginDirectoryListing.encode(entries)
        client.didReceive(PluginResponse(mimeType: PluginDirectoryListing.mimeType, textEncodingName: "utf-8",
                                         expectedContentLength: Int64(body.count)))
        if request.httpMethod != "HEAD", !body.isEmpty { client.didLoad(body) }
        if !isStopped { client.didFinishLoading() }
    }

    /// Streams a file entry, honouring a resume offset and the consumer's pace.
    private func stream(_ entry: Entry, index: Int, of directory: ZipCentralDirectory, reader: ZipFileReader, at archiveURL: URL) {
        guard let record = try? directory.record(at: index), let size = Int64(exactly: record.uncompressedSize) else {
            return client.didFail(.cannotDecodeContentData, message: "The entry \(entry.path) cannot be located in the archive.")
        }
        let attributes = try? FileManager.default.attributesOfItem(atPath: archiveURL.path)
        let archiveSize = (attributes?[.size] as? NSNumber)?.int64Value ?? -1
        let modified = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        let validator = "\(archiveSize)-\(modified)-\(entry.checksum)"
        client.setResumeValidator(validator)
        var skip: Int64 = 0
        if let offset = request.resumeOffset, request.resumeValidator == validator, offset <= size {
            client.didResume(atOffset: offset, expectedTotalBytes: size)
            skip = offset
        }
        let mimeType = ZipMIMETypes.mimeType(forName: entry.path)
        client.didReceive(PluginResponse(mimeType: mimeType, expectedContentLength: size))
        if request.httpMethod == "HEAD" {
            return client.didFinishLoading()
        }
        do {
            try ZipEntryReader(reader: reader, record: record).read(chunkSize: Self.chunkSize) { chunk in
                var data = chunk
                if skip > 0 {
                    let dropped = min(Int64(data.count), skip)
                    data = data.dropFirst(Int(dropped))
                    skip -= dropped
                    if data.isEmpty { return }
                }
                try waitForConsumer()
                client.didLoad(Data(data))
            }
        } catch is Stopped {
            return
        } catch {
            guard !isStopped else { return }
            let message = (error as? ZipEntryReader.Failure) == .checksumMismatch
                ? "The entry \(entry.path) is corrupt (CRC-32 mismatch)."
                : "The entry \(entry.path) cannot be read: \(error)."
            return client.didFail(.cannotDecodeContentData, message: message)
        }
        if !isStopped { client.didFinishLoading() }
    }

    /// Waits while the consumer cannot take more data; throws when the load is stopped.
    private func waitForConsumer() throws {
        while true {
            if isStopped { throw Stopped() }
            if client.canAcceptMoreData { return }
            _ = wake.wait(timeout: .now() + .milliseconds(250))
        }
    }
}
