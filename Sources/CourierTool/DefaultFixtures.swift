import Foundation

/// The files the embedded default run loads, written into a fresh temporary directory that
/// ``remove()`` deletes afterwards, and the placeholder values the checks' URLs use.
struct DefaultFixtures: Sendable {
    /// The content of `hello.txt`.
    static let helloText = "Hello from courier's default run.\n"

    /// The temporary directory.
    let directory: URL

    /// Creates the directory and its files: `hello.txt`, `large.bin` (``DefaultRun/largeFileSize``
    /// bytes, written in 1 MiB chunks) and an empty-ish directory `folder/`. `missing.txt` is never
    /// created.
    static func create() throws -> DefaultFixtures {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-default-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        let fixtures = DefaultFixtures(directory: directory)
        do {
            try Data(helloText.utf8).write(to: directory.appendingPathComponent("hello.txt"))
            try writeLargeFile(at: directory.appendingPathComponent("large.bin"), size: DefaultRun.largeFileSize)
            let folder = directory.appendingPathComponent("folder", isDirectory: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
            try Data("inside\n".utf8).write(to: folder.appendingPathComponent("inside.txt"))
        } catch {
            fixtures.remove()
            throw error
        }
        return fixtures
    }

    /// The values of the placeholders in ``DefaultCheck/url``.
    var placeholders: [String: String] {
        var files = directory.absoluteString
        while files.hasSuffix("/") { files.removeLast() }
        return ["{files}": files]
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
