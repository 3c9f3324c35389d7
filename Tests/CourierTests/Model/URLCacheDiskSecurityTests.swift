import Foundation
import Testing
@testable import Courier
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The URL cache's disk store keeps to the user's own private files: its directory is 0700 and the
/// user's own, its entries 0600, and an entry file it did not write (a symbolic link, another
/// user's file, a file open to others, a file larger than the store) is a miss and is removed,
/// never followed or read. Each test uses its own directory and a cache without a memory store, so
/// every lookup reads the disk.
@Suite("URLCache disk store security")
struct URLCacheDiskSecurityTests {

    /// The uid of `nobody`, owner of the files "another user" left.
    private static let otherUser: uid_t = 65534
    private static let isRoot = geteuid() == 0

    private let url = URL(string: "https://example.com/private") ?? URL(fileURLWithPath: "/")

    /// A fresh directory path (not created).
    private func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-cache-security-\(UUID().uuidString)", isDirectory: true)
    }

    /// A disk-only cache in `directory`.
    private func cache(in directory: URL, disk: Int = 1 << 20) -> URLCache {
        URLCache(memoryCapacity: 0, diskCapacity: disk, diskPath: directory.path)
    }

    private func response(body: String = "secret") throws -> CachedURLResponse {
        let http = try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                                                headerFields: ["Cache-Control": "max-age=60"]))
        return CachedURLResponse(response: http, data: Data(body.utf8), userInfo: nil, storagePolicy: .allowed)
    }

    /// The entry file of `url` in `directory`.
    private func entryFile(in directory: URL) -> URL {
        directory.appendingPathComponent(URLCacheDiskStore.fileName(forKey: url.absoluteString))
    }

    private func mode(of path: String) -> mode_t? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return info.st_mode & 0o777
    }

    private func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    // MARK: The directory

    @Test func existingLooseDirectoryIsTightenedAndEntriesArePrivate() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        #expect(chmod(directory.path, 0o755) == 0)

        let cache = cache(in: directory)
        #expect(cache.cachedResponse(for: URLRequest(url: url)) == nil) // first use
        #expect(mode(of: directory.path) == 0o700)
        cache.storeCachedResponse(try response(), for: URLRequest(url: url))
        #expect(mode(of: entryFile(in: directory).path) == 0o600)
        #expect(cache.cachedResponse(for: URLRequest(url: url)).map { String(decoding: $0.data, as: UTF8.self) } == "secret")
    }

    @Test func directoryThatIsASymbolicLinkIsRefused() throws {
        let real = temporaryDirectory()
        let link = temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(at: link)
            try? FileManager.default.removeItem(at: real)
        }
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        #expect(symlink(real.path, link.path) == 0)

        let cache = cache(in: link)
        cache.storeCachedResponse(try response(), for: URLRequest(url: url))
        #expect(try FileManager.default.contentsOfDirectory(atPath: real.path).isEmpty)
        #expect(cache.cachedResponse(for: URLRequest(url: url)) == nil)
        #expect(cache.currentDiskUsage == 0)
    }

    @Test(.enabled(if: isRoot, "changing a directory's owner needs root"))
    func directoryOfAnotherUserIsRefused() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        #expect(chown(directory.path, Self.otherUser, Self.otherUser) == 0)

        let cache = cache(in: directory)
        cache.storeCachedResponse(try response(), for: URLRequest(url: url))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        #expect(cache.cachedResponse(for: URLRequest(url: url)) == nil)
    }

    // MARK: Entries

    @Test func entryReplacedByASymbolicLinkIsNotFollowed() throws {
        let directory = temporaryDirectory()
        let elsewhere = temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(at: directory)
            try? FileManager.default.removeItem(at: elsewhere)
        }
        let cache = cache(in: directory)
        cache.storeCachedResponse(try response(), for: URLRequest(url: url))
        #expect(cache.cachedResponse(for: URLRequest(url: url)) != nil)

        // The entry moves out of the directory and a link to it takes its place: a valid entry for
        // the very key, so only the link stands between it and the reader.
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let target = elsewhere.appendingPathComponent("target.cache")
        let entry = entryFile(in: directory)
        #expect(rename(entry.path, target.path) == 0)
        #expect(symlink(target.path, entry.path) == 0)

        #expect(cache.cachedResponse(for: URLRequest(url: url)) == nil)
        #expect(!exists(entry.path)) // the link was removed…
        #expect(exists(target.path)) // …and what it pointed to left alone
    }

    @Test func entryOpenToOthersIsNotServed() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = cache(in: directory)
        cache.storeCachedResponse(try response(), for: URLRequest(url: url))
        let entry = entryFile(in: directory)
        #expect(chmod(entry.path, 0o644) == 0)

        #expect(cache.cachedResponse(for: URLRequest(url: url)) == nil)
        #expect(!exists(entry.path))
    }

    @Test(.enabled(if: isRoot, "changing a file's owner needs root"))
    func entryOfAnotherUserIsNotServed() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = cache(in: directory)
        cache.storeCachedResponse(try response(), for: URLRequest(url: url))
        let entry = entryFile(in: directory)
        #expect(chown(entry.path, Self.otherUser, Self.otherUser) == 0)

        #expect(cache.cachedResponse(for: URLRequest(url: url)) == nil)
        #expect(!exists(entry.path))
    }

    @Test func oversizedEntryIsNotRead() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let capacity = 4096
        let cache = cache(in: directory, disk: capacity)
        cache.storeCachedResponse(try response(), for: URLRequest(url: url))
        #expect(cache.cachedResponse(for: URLRequest(url: url)) != nil)

        // A well-formed entry for the same key, private to the user, but larger than the store.
        let big = try response(body: String(repeating: "x", count: 2 * capacity))
        let encoded = try #require(URLCacheDiskStore.encode(URLCacheDiskEntry(
            key: url.absoluteString, response: big.response, data: big.data, storagePolicy: .allowed, storedAt: Date())))
        let entry = entryFile(in: directory)
        try encoded.write(to: entry)
        #expect(chmod(entry.path, 0o600) == 0)

        #expect(cache.cachedResponse(for: URLRequest(url: url)) == nil)
        #expect(!exists(entry.path))
    }

    // MARK: Scopes on disk

    @Test func scopedEntryKeepsItsScopeOnDisk() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var alice = URLRequest(url: url)
        URLCacheScope.mark(&alice, with: "sha256:alice")
        var bob = URLRequest(url: url)
        URLCacheScope.mark(&bob, with: "sha256:bob")
        cache(in: directory).storeCachedResponse(try response(), for: alice)

        // A new cache over the same directory (a later run) reads the scope back.
        let later = cache(in: directory)
        #expect(later.cachedResponse(for: URLRequest(url: url)) == nil)
        #expect(later.cachedResponse(for: bob) == nil)
        #expect(later.cachedResponse(for: alice) != nil)
    }
}
