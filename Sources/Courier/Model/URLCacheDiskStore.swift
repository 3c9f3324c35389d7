import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The on-disk half of a `URLCache`: one file per cached response in a private directory.
///
/// - Files are named after a 64-bit FNV-1a hash of the cache key and hold the key itself, so a
///   hash collision is detected on read and treated as a miss.
/// - Each file is written to a temporary file in the same directory and renamed over the
///   target, so readers never see a half-written entry (``StoreFile``, without flushing to disk).
/// - The directory is created on first write with permissions 0700, files with 0600. An existing
///   directory of the user's is tightened to 0700 on first use; a directory that is a symbolic
///   link or belongs to another user is refused: the store then reads and writes nothing.
/// - An entry is opened without following a symbolic link and read only when it is a regular
///   file of the user's, private to them (no group or other permission bits), and no larger than
///   the capacity (``StoreFile/read()``). Any other file under an entry's name is a miss and is
///   removed (the link itself, never what it points to).
/// - When the total size exceeds the capacity, the least recently used entries are deleted.
/// - The index (sizes, store dates, use order) is kept in memory and rebuilt from the directory
///   the first time the store is used; store dates survive as the files' modification dates.
///
/// All file-system work happens under one lock: the store is simple, not fast.
final class URLCacheDiskStore: Sendable {

    /// What the store remembers about one file.
    private struct IndexEntry {
        var size: Int
        var storedAt: Date
        var lastUse: UInt64
    }

    private struct State {
        var capacity: Int
        var index: [String: IndexEntry] = [:]
        var usage = 0
        var clock: UInt64 = 0
        var loaded = false
        /// The directory may not be used (``PrivateDirectory/State/refused``).
        var refused = false
    }

    /// The directory holding the entries.
    let directory: URL
    private let state: Locked<State>

    private static let fileExtension = "cache"
    private static let magic: [UInt8] = Array("CRCACHE1".utf8)

    /// Creates a store for `directory` (not touched until first use) with a byte capacity.
    init(directory: URL, capacity: Int) {
        self.directory = directory
        state = Locked(State(capacity: max(0, capacity)))
    }

    /// The byte capacity; lowering it evicts entries at once.
    var capacity: Int {
        get { state.withLock { $0.capacity } }
        set {
            state.withLock { state in
                state.capacity = max(0, newValue)
                loadIfNeeded(&state)
                evict(&state, toFit: 0)
            }
        }
    }

    /// Bytes currently used by the entry files.
    var currentUsage: Int {
        state.withLock { state in
            loadIfNeeded(&state)
            return state.usage
        }
    }

    /// The stored entry for `key`, or `nil`.
    func entry(forKey key: String) -> URLCacheDiskEntry? {
        state.withLock { state -> URLCacheDiskEntry? in
            loadIfNeeded(&state)
            let name = Self.fileName(forKey: key)
            guard !state.refused, state.index[name] != nil else { return nil }
            guard case .contents(let contents) = file(named: name, capacity: state.capacity).read(),
                  let entry = Self.decode(contents) else {
                // Missing, refused, unreadable or corrupt: drop it so it stops taking space.
                remove(name, from: &state)
                return nil
            }
            guard entry.key == key else { return nil } // hash collision
            state.clock &+= 1
            state.index[name]?.lastUse = state.clock
            return entry
        }
    }

    /// Stores an entry, replacing the previous one for the same key. Entries larger than the
    /// capacity, and any entry when the directory cannot be written, are silently skipped.
    func store(_ entry: URLCacheDiskEntry) {
        guard let encoded = Self.encode(entry) else { return }
        state.withLock { state in
            loadIfNeeded(&state)
            guard !state.refused else { return }
            let name = Self.fileName(forKey: entry.key)
            remove(name, from: &state)
            guard encoded.count <= state.capacity else { return }
            evict(&state, toFit: encoded.count)
            guard file(named: name, capacity: state.capacity).write(encoded, durably: false) else { return }
            state.clock &+= 1
            state.index[name] = IndexEntry(size: encoded.count, storedAt: entry.storedAt, lastUse: state.clock)
            state.usage += encoded.count
        }
    }

    /// Deletes the entry for `key`, if any.
    func removeEntry(forKey key: String) {
        state.withLock { state in
            loadIfNeeded(&state)
            remove(Self.fileName(forKey: key), from: &state)
        }
    }

    /// Deletes every entry.
    func removeAll() {
        state.withLock { state in
            loadIfNeeded(&state)
            for name in Array(state.index.keys) { remove(name, from: &state) }
        }
    }

    /// Deletes every entry stored at or after `date`.
    func removeEntries(since date: Date) {
        state.withLock { state in
            loadIfNeeded(&state)
            for (name, entry) in state.index where entry.storedAt >= date {
                remove(name, from: &state)
            }
        }
    }

    // MARK: - Index

    /// Checks the directory and builds the index from the files already in it (once).
    private func loadIfNeeded(_ state: inout State) {
        guard !state.loaded else { return }
        state.loaded = true
        switch PrivateDirectory.inspect(directory, strict: true) {
        case .missing: return
        case .refused:
            state.refused = true
            return
        case .usable: break
        }
        let keys: [URLResourceKey] = [.fileSizeKey, .contentModificationDateKey]
        guard let files = try? FileManager.default.contentsOfDirectory(
            at: directory, includingPropertiesForKeys: keys, options: [.skipsHiddenFiles]) else { return }
        let entries = files.compactMap { file -> (String, Int, Date)? in
            guard file.pathExtension == Self.fileExtension,
                  let values = try? file.resourceValues(forKeys: Set(keys)) else { return nil }
            return (file.lastPathComponent, values.fileSize ?? 0, values.contentModificationDate ?? Date.distantPast)
        }
        // Oldest files count as least recently used.
        for (name, size, date) in entries.sorted(by: { $0.2 < $1.2 }) {
            state.clock &+= 1
            state.index[name] = IndexEntry(size: size, storedAt: date, lastUse: state.clock)
            state.usage += size
        }
        evict(&state, toFit: 0)
    }

    /// Deletes least recently used entries until `extra` more bytes fit in the capacity.
    private func evict(_ state: inout State, toFit extra: Int) {
        while state.usage + extra > state.capacity, !state.index.isEmpty {
            guard let oldest = state.index.min(by: { $0.value.lastUse < $1.value.lastUse })?.key else { return }
            remove(oldest, from: &state)
        }
    }

    /// Deletes one indexed file and forgets it (the index is authoritative once loaded, so
    /// unknown names cost no file-system call).
    private func remove(_ name: String, from state: inout State) {
        guard let entry = state.index.removeValue(forKey: name) else { return }
        state.usage -= entry.size
        file(named: name, capacity: state.capacity).remove()
    }

    // MARK: - Files

    /// The entry file `name`: read only when it is the user's own private regular file of at most
    /// `capacity` bytes (no entry this store writes is larger), written into a directory that is
    /// the user's own.
    private func file(named name: String, capacity: Int) -> StoreFile {
        StoreFile(url: directory.appendingPathComponent(name, isDirectory: false), ownerOnly: true,
                  sizeLimit: capacity, strictDirectory: true)
    }

    /// The file name for a cache key: `<16 hex digits>.cache`.
    static func fileName(forKey key: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex + "." + fileExtension
    }

    // MARK: - Encoding

    /// The metadata part of an entry file.
    private struct Metadata: Codable {
        var key: String
        var url: String
        var mimeType: String?
        var expectedContentLength: Int64
        var textEncodingName: String?
        var statusCode: Int?
        var httpVersion: String?
        var headerFields: [[String]]?
        var storagePolicy: UInt
        var storedAt: Double
        /// The varying request headers' values (absent in files written without them).
        var vary: [String: String]?
        /// The scope of the request it was stored for (``URLCacheScope``; absent: none).
        var scope: String?
    }

    /// File layout: the magic bytes, the metadata's length (4 bytes, big-endian), the metadata
    /// as JSON, then the body.
    static func encode(_ entry: URLCacheDiskEntry) -> Data? {
        let response = entry.response
        guard let url = response.url else { return nil }
        var metadata = Metadata(key: entry.key, url: url.absoluteString, mimeType: response.mimeType,
                                expectedContentLength: response.expectedContentLength,
                                textEncodingName: response.textEncodingName,
                                statusCode: nil, httpVersion: nil, headerFields: nil,
                                storagePolicy: entry.storagePolicy.rawValue,
                                storedAt: entry.storedAt.timeIntervalSince1970,
                                vary: entry.vary?.values, scope: entry.scope)
        if let http = response as? HTTPURLResponse {
            metadata.statusCode = http.statusCode
            metadata.httpVersion = http.httpVersion
            metadata.headerFields = http.headerFields.map { [$0.name, $0.value] }
        }
        guard let json = try? JSONEncoder().encode(metadata), json.count <= Int(UInt32.max) else { return nil }
        var data = Data(magic)
        let length = UInt32(json.count)
        data.append(contentsOf: [UInt8(length >> 24 & 0xff), UInt8(length >> 16 & 0xff),
                                 UInt8(length >> 8 & 0xff), UInt8(length & 0xff)])
        data.append(json)
        data.append(entry.data)
        return data
    }

    /// Reads an entry file; `nil` when it is not one or is damaged.
    static func decode(_ contents: Data) -> URLCacheDiskEntry? {
        let bytes = [UInt8](contents.prefix(magic.count + 4))
        guard bytes.count == magic.count + 4, Array(bytes.prefix(magic.count)) == magic else { return nil }
        let lengthBytes = bytes.suffix(4).map(Int.init)
        let length = lengthBytes[0] << 24 | lengthBytes[1] << 16 | lengthBytes[2] << 8 | lengthBytes[3]
        let metadataStart = contents.startIndex + magic.count + 4
        guard contents.endIndex - metadataStart >= length else { return nil }
        let metadataEnd = metadataStart + length
        guard let metadata = try? JSONDecoder().decode(Metadata.self, from: contents[metadataStart..<metadataEnd]),
              let url = URL(string: metadata.url),
              let policy = URLCache.StoragePolicy(rawValue: metadata.storagePolicy)
        else { return nil }

        let response: URLResponse
        if let statusCode = metadata.statusCode {
            let pairs = (metadata.headerFields ?? []).compactMap { pair -> (String, String)? in
                pair.count == 2 ? (pair[0], pair[1]) : nil
            }
            response = HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: metadata.httpVersion,
                                       fields: HTTPHeaderFields(pairs: pairs))
        } else {
            let length = Int(exactly: metadata.expectedContentLength) ?? -1
            response = URLResponse(url: url, mimeType: metadata.mimeType, expectedContentLength: length,
                                   textEncodingName: metadata.textEncodingName)
        }
        return URLCacheDiskEntry(key: metadata.key, response: response,
                                 data: Data(contents[metadataEnd...]), storagePolicy: policy,
                                 storedAt: Date(timeIntervalSince1970: metadata.storedAt),
                                 vary: metadata.vary.map(URLCacheVary.init(values:)), scope: metadata.scope)
    }
}

/// One cached response as the disk store reads and writes it (`userInfo` is never persisted).
struct URLCacheDiskEntry: Sendable {
    /// The cache key (the request's URL without fragment).
    var key: String
    /// The cached response.
    var response: URLResponse
    /// The cached body.
    var data: Data
    /// The storage policy the response was stored with.
    var storagePolicy: URLCache.StoragePolicy
    /// When the response was stored.
    var storedAt: Date
    /// The values of the request headers the response varies on, if it has `Vary`.
    var vary: URLCacheVary? = nil
    /// The scope of the request it was stored for (``URLCacheScope``), if any.
    var scope: String? = nil
}
