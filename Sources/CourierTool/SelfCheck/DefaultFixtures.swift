import Foundation
import ZIPFoundation

/// The files the embedded default run loads, written into a fresh temporary directory that
/// ``remove()`` deletes afterwards, and the placeholder values the checks' URLs use.
struct DefaultFixtures: Sendable {
    /// The content of `hello.txt` (and of the archive's `hello.txt`).
    static let helloText = "Hello from courier's default run.\n"

    /// The content of the archive's `data.json`.
    static let zipJSON = #"{"archive":"written by courier's default run","stored":true}"# + "\n"

    /// The temporary directory.
    let directory: URL

    /// The loopback HTTP server's port, once it runs (`{port}`).
    var httpPort: Int?

    /// The loopback gopher server's port, once it runs (`{gopher-port}`).
    var gopherPort: Int?

    /// Where the run copies the plugins it loads (see ``DefaultPlugins``).
    var pluginDirectory: URL { directory.appendingPathComponent("plugins", isDirectory: true) }

    /// Creates the directory (mode 0700) and its files: `hello.txt`, `large.bin`
    /// (``DefaultRun/largeFileSize`` bytes, written in 1 MiB chunks), an empty-ish directory `folder/`
    /// and `archive.zip` (stored entries `hello.txt`, `data.json`, `docs/`, `docs/readme.txt`).
    /// `missing.txt` is never created.
    static func create() throws -> DefaultFixtures {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-default-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        let fixtures = DefaultFixtures(directory: directory)
        do {
            try Data(helloText.utf8).write(to: directory.appendingPathComponent("hello.txt"))
            try writeLargeFile(at: directory.appendingPathComponent("large.bin"), size: DefaultRun.largeFileSize)
            let folder = directory.appendingPathComponent("folder", isDirectory: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
            try Data("inside\n".utf8).write(to: folder.appendingPathComponent("inside.txt"))
            try writeArchive(to: directory.appendingPathComponent("archive.zip"))
        } catch {
            fixtures.remove()
            throw error
        }
        return fixtures
    }

    /// The entries of the archive the zip: checks read, in order: a path (a directory's ends in `/`)
    /// and its contents.
    static let archiveEntries: [(path: String, contents: Data)] = [
        ("hello.txt", Data(helloText.utf8)),
        ("data.json", Data(zipJSON.utf8)),
        ("docs/", Data()),
        ("docs/readme.txt", Data("A stored entry in a directory.\n".utf8)),
    ]

    /// When the archive's entries were last modified, as they are stored: 1980-01-01 00:00 UTC, the
    /// first time a zip entry can hold, so the zip: listing is the same on every run.
    static let archiveDate = Date(timeIntervalSince1970: 315_532_800)

    /// Writes the archive with ``archiveEntries`` to `url` (a new file), with ZIPFoundation: every
    /// entry stored (not compressed), files 0644 and directories 0755.
    static func writeArchive(to url: URL) throws {
        let archive = try Archive(url: url, accessMode: .create)
        for (path, contents) in archiveEntries {
            try archive.addEntry(with: path, type: path.hasSuffix("/") ? .directory : .file,
                                 uncompressedSize: Int64(contents.count), modificationDate: archiveDate,
                                 compressionMethod: .none) { position, size in
                contents.subdata(in: Int(position)..<(Int(position) + size))
            }
        }
    }

    /// The values of the placeholders in ``DefaultCheck/url``; a port placeholder is missing until
    /// its server runs.
    var placeholders: [String: String] {
        var files = directory.absoluteString
        while files.hasSuffix("/") { files.removeLast() }
        // `!` separates the archive from the entry in a zip: URL, so it is encoded too.
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove("!")
        var path = directory.path.addingPercentEncoding(withAllowedCharacters: allowed) ?? directory.path
        while path.hasSuffix("/") { path.removeLast() }
        var values = ["{files}": files, "{files-path}": path]
        if let httpPort { values["{port}"] = String(httpPort) }
        if let gopherPort { values["{gopher-port}"] = String(gopherPort) }
        return values
    }

    /// `template` with its placeholders filled in.
    func resolve(_ template: String) -> String {
        placeholders.reduce(template) { $0.replacingOccurrences(of: $1.key, with: $1.value) }
    }

    /// Deletes the directory and everything in it.
    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    private static func writeLargeFile(at url: URL, size: Int64) throws {
        let chunkSize = 1 << 20
        var chunk = Data(count: chunkSize)
        chunk.withUnsafeMutableBytes { bytes in
            for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: index &* 31 &+ 7) }
        }
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var written: Int64 = 0
        while written < size {
            let count = Int(min(Int64(chunkSize), size - written))
            try handle.write(contentsOf: count == chunkSize ? chunk : chunk.prefix(count))
            written += Int64(count)
        }
    }
}
