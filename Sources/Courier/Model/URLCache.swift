import Foundation

/// A thread-safe cache of responses to `GET` requests, kept in memory and, optionally, on disk.
///
/// Entries are keyed by the request's URL (without its fragment); requests with any other method
/// are neither stored nor looked up. An HTTP response with `Vary` is returned only for requests
/// whose varying headers equal those of the request it was stored for (see `URLCacheVary`); one
/// with `Vary: *` is never stored. A response a task stored for a request carrying cookies is
/// returned only to requests carrying the same cookies, and one stored without cookies only to
/// requests without (see `URLCacheScope`). The memory store evicts the least recently used entries
/// beyond `memoryCapacity` (an entry costs its body size plus a small fixed overhead). When
/// `diskCapacity` is above zero, responses stored with the `.allowed` policy are also written to
/// the disk directory, one file per entry, and evicted by size beyond `diskCapacity`.
///
/// The cache stores what it is given; deciding whether a response may be cached (status code,
/// `Cache-Control`, request cache policy) is the job of the loading layers.
open class URLCache: NSObject, @unchecked Sendable {

    /// The fixed number of bytes added to each memory entry's cost for its bookkeeping.
    static let memoryEntryOverhead = 256

    /// One entry of the memory store.
    private struct MemoryEntry {
        let response: CachedURLResponse
        let storedAt: Date
        /// The varying request headers' values, for a response with `Vary`.
        let vary: URLCacheVary?
        /// The scope of the request it was stored for (`URLCacheScope`).
        let scope: String?
        let cost: Int
        var lastUse: UInt64
    }

    private struct State {
        var memoryCapacity: Int
        var entries: [String: MemoryEntry] = [:]
        var memoryUsage = 0
        var clock: UInt64 = 0
    }

    private let state: Locked<State>
    private let diskStore: URLCacheDiskStore

    private static let sharedCache = Locked<URLCache?>(nil)

    /// The cache used by the shared session and by default session configurations.
    ///
    /// Unless replaced, it holds 4 MB in memory and 20 MB on disk, in the default directory
    /// (see `init(memoryCapacity:diskCapacity:diskPath:)`). Setting it is thread-safe.
    open class var shared: URLCache {
        get {
            sharedCache.withLock { cache in
                if let cache { return cache }
                let created = URLCache(memoryCapacity: 4 * 1024 * 1024, diskCapacity: 20 * 1024 * 1024, diskPath: nil)
                cache = created
                return created
            }
        }
        set {
            sharedCache.withLock { $0 = newValue }
        }
    }

    /// Creates a cache.
    ///
    /// The disk directory is created (with permissions 0700) when the first entry is written; an
    /// existing one of the user's is tightened to 0700, and one that is a symbolic link or belongs
    /// to another user is not used at all (see `URLCacheDiskStore`).
    ///
    /// - Parameters:
    ///   - memoryCapacity: The memory store's size limit in bytes; 0 disables it.
    ///   - diskCapacity: The disk store's size limit in bytes; 0 disables it.
    ///   - path: The disk directory: an absolute path, or a path relative to the user's cache
    ///     directory (`$XDG_CACHE_HOME` or `~/.cache`). With `nil`, a directory named after the
    ///     program under the user's cache directory is used.
    public init(memoryCapacity: Int, diskCapacity: Int, diskPath path: String?) {
        state = Locked(State(memoryCapacity: max(0, memoryCapacity)))
        diskStore = URLCacheDiskStore(directory: Self.diskDirectory(for: path), capacity: diskCapacity)
        super.init()
    }

    /// Resolves the disk directory for a `diskPath` argument.
    static func diskDirectory(for path: String?) -> URL {
        if let path, path.hasPrefix("/") {
            return URL(fileURLWithPath: path, isDirectory: true)
        }
        let environment = ProcessInfo.processInfo.environment
        let base: URL
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            base = URL(fileURLWithPath: xdg, isDirectory: true)
        } else {
            base = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache", isDirectory: true)
        }
        if let path, !path.isEmpty {
            return base.appendingPathComponent(path, isDirectory: true)
        }
        let program = ProcessInfo.processInfo.processName
        return base
            .appendingPathComponent(program.isEmpty ? "Courier" : program, isDirectory: true)
            .appendingPathComponent("Courier.URLCache", isDirectory: true)
    }

    /// The cache key of a request, or `nil` when the request cannot be cached (not `GET`, or
    /// no URL).
    static func key(for request: URLRequest) -> String? {
        let method = request.uppercasedHTTPMethod
        guard method == "GET", let url = request.url else { return nil }
        let absolute = url.absoluteString
        // Searched on the UTF-8 bytes (a tight loop over the contiguous storage, not the view's
        // iterator): "#" is ASCII, so its offset is a valid character boundary.
        let offset = absolute.utf8.withContiguousStorageIfAvailable { $0.firstIndex(of: UInt8(ascii: "#")) }
            ?? absolute.utf8.firstIndex(of: UInt8(ascii: "#")).map { absolute.utf8.distance(from: absolute.utf8.startIndex, to: $0) }
        if let offset {
            let hash = absolute.utf8.index(absolute.utf8.startIndex, offsetBy: offset)
            return String(absolute[absolute.startIndex..<hash])
        }
        return absolute
    }

    /// The memory cost of a cached response: its body size plus `memoryEntryOverhead`.
    static func memoryCost(of response: CachedURLResponse) -> Int {
        response.data.count + memoryEntryOverhead
    }

    /// The cached response for a request, from memory or else from disk, or `nil`.
    ///
    /// A response found on disk is brought back into memory. A response stored with `Vary`
    /// is returned only when the request's varying headers match, and only for a request with the
    /// scope it was stored with (`URLCacheScope`; none for requests the app makes).
    ///
    /// - Parameter request: The request; only `GET` requests can hit.
    open func cachedResponse(for request: URLRequest) -> CachedURLResponse? {
        guard let key = Self.key(for: request) else { return nil }
        enum MemoryLookup { case hit(CachedURLResponse), mismatch, miss }
        let fromMemory = state.withLock { state -> MemoryLookup in
            guard var entry = state.entries[key] else { return .miss }
            guard URLCacheVary.request(request, matches: entry.vary, for: entry.response.response),
                  URLCacheScope.request(request, mayUse: entry.scope) else { return .mismatch }
            state.clock &+= 1
            entry.lastUse = state.clock
            state.entries[key] = entry
            return .hit(entry.response)
        }
        switch fromMemory {
        case .hit(let response): return response
        case .mismatch: return nil
        case .miss: break
        }
        guard diskStore.capacity > 0, let stored = diskStore.entry(forKey: key),
              URLCacheVary.request(request, matches: stored.vary, for: stored.response),
              URLCacheScope.request(request, mayUse: stored.scope) else { return nil }
        let response = CachedURLResponse(response: stored.response, data: stored.data, userInfo: nil,
                                         storagePolicy: stored.storagePolicy)
        state.withLock {
            Self.insert(response, key: key, storedAt: stored.storedAt, vary: stored.vary, scope: stored.scope, into: &$0)
        }
        return response
    }

    /// When `response` was stored, if it is the entry the memory store holds for `request`'s key
    /// (the object ``cachedResponse(for:)`` returned); `nil` otherwise (for example when a
    /// subclass made it up). The HTTP handler uses it as the response's arrival time when it
    /// computes the response's age.
    func storageDate(of response: CachedURLResponse, for request: URLRequest) -> Date? {
        guard let key = Self.key(for: request) else { return nil }
        return state.withLock { state in
            guard let entry = state.entries[key], entry.response === response else { return nil }
            return entry.storedAt
        }
    }

    /// Stores a response for a request, as its storage policy allows.
    ///
    /// `.notAllowed` responses are not stored; `.allowedInMemoryOnly` ones go to memory only (and
    /// replace any disk copy); `.allowed` ones go to memory and, when `diskCapacity` is above
    /// zero, to disk. Requests other than `GET` are ignored. For an HTTP response with `Vary`, the
    /// request's values of the headers it names are kept with it; a response with `Vary: *`
    /// removes the entry instead, as it could never be reused. The scope a task marked its
    /// request with (`URLCacheScope`) is kept too; a request the app made has none.
    ///
    /// - Parameters:
    ///   - cachedResponse: The response and body to store.
    ///   - request: The request the response answers.
    open func storeCachedResponse(_ cachedResponse: CachedURLResponse, for request: URLRequest) {
        guard let key = Self.key(for: request) else { return }
        let policy = cachedResponse.storagePolicy
        guard policy != .notAllowed else { return }
        guard !URLCacheVary.variesOnEverything(cachedResponse.response) else {
            removeCachedResponse(for: request)
            return
        }
        let vary = URLCacheVary(response: cachedResponse.response, request: request)
        let scope = URLCacheScope.of(request)
        let now = Date()
        state.withLock { Self.insert(cachedResponse, key: key, storedAt: now, vary: vary, scope: scope, into: &$0) }
        guard diskStore.capacity > 0 else { return }
        if policy == .allowed {
            diskStore.store(URLCacheDiskEntry(key: key, response: cachedResponse.response, data: cachedResponse.data,
                                              storagePolicy: policy, storedAt: now, vary: vary, scope: scope))
        } else {
            diskStore.removeEntry(forKey: key) // a memory-only response replaces any disk copy
        }
    }

    /// Puts a response into the locked memory store, evicting as needed.
    private static func insert(_ response: CachedURLResponse, key: String, storedAt: Date, vary: URLCacheVary?,
                               scope: String?, into state: inout State) {
        if let previous = state.entries.removeValue(forKey: key) {
            state.memoryUsage -= previous.cost
        }
        let cost = memoryCost(of: response)
        guard cost <= state.memoryCapacity else { return }
        evict(&state, toFit: cost)
        state.clock &+= 1
        state.entries[key] = MemoryEntry(response: response, storedAt: storedAt, vary: vary, scope: scope, cost: cost,
                                         lastUse: state.clock)
        state.memoryUsage += cost
    }

    /// Drops least recently used memory entries until `extra` more bytes fit.
    private static func evict(_ state: inout State, toFit extra: Int) {
        while state.memoryUsage + extra > state.memoryCapacity, !state.entries.isEmpty {
            guard let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key,
                  let removed = state.entries.removeValue(forKey: oldest) else { return }
            state.memoryUsage -= removed.cost
        }
    }

    /// Removes the cached response for a request, from memory and disk.
    ///
    /// - Parameter request: The request whose response should be forgotten.
    open func removeCachedResponse(for request: URLRequest) {
        guard let key = Self.key(for: request) else { return }
        state.withLock { state in
            if let removed = state.entries.removeValue(forKey: key) {
                state.memoryUsage -= removed.cost
            }
        }
        diskStore.removeEntry(forKey: key)
    }

    /// Empties the cache, in memory and on disk.
    open func removeAllCachedResponses() {
        state.withLock { state in
            state.entries.removeAll()
            state.memoryUsage = 0
        }
        diskStore.removeAll()
    }

    /// Removes every response stored at or after `date`, in memory and on disk.
    ///
    /// - Parameter date: The earliest storage date to remove.
    open func removeCachedResponses(since date: Date) {
        state.withLock { state in
            for (key, entry) in state.entries where entry.storedAt >= date {
                state.entries.removeValue(forKey: key)
                state.memoryUsage -= entry.cost
            }
        }
        diskStore.removeEntries(since: date)
    }

    /// The memory store's size limit in bytes; lowering it evicts entries at once.
    open var memoryCapacity: Int {
        get { state.withLock { $0.memoryCapacity } }
        set {
            state.withLock { state in
                state.memoryCapacity = max(0, newValue)
                Self.evict(&state, toFit: 0)
            }
        }
    }

    /// The disk store's size limit in bytes; lowering it deletes entries at once, 0 disables it.
    open var diskCapacity: Int {
        get { diskStore.capacity }
        set { diskStore.capacity = newValue }
    }

    /// The bytes currently charged to the memory store.
    open var currentMemoryUsage: Int {
        state.withLock { $0.memoryUsage }
    }

    /// The bytes currently used by the disk store's files.
    open var currentDiskUsage: Int {
        diskStore.currentUsage
    }

    // Declared here rather than in an extension so that subclasses can override them, as with
    // Apple's; the implementations live with the tasks, in `Tasks/URLCache+Tasks.swift`.

    /// Stores a response as the answer to a data task's current request (the request after
    /// redirects). Does nothing when the task has no current request.
    ///
    /// - Parameters:
    ///   - cachedResponse: The response and body to store.
    ///   - dataTask: The task whose current request the response answers.
    open func storeCachedResponse(_ cachedResponse: CachedURLResponse, for dataTask: URLSessionDataTask) {
        storeCachedResponse(cachedResponse, forRequestOf: dataTask)
    }

    /// Looks up the cached response to a data task's current request and passes it, or `nil`, to
    /// `completionHandler` on a background queue.
    ///
    /// - Parameters:
    ///   - dataTask: The task whose current request is looked up.
    ///   - completionHandler: Called once with the response.
    open func getCachedResponse(for dataTask: URLSessionDataTask, completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void) {
        getCachedResponse(forRequestOf: dataTask, completionHandler: completionHandler)
    }

    /// Removes the cached response to a data task's current request, from memory and disk.
    ///
    /// - Parameter dataTask: The task whose current request's response should be forgotten.
    open func removeCachedResponse(for dataTask: URLSessionDataTask) {
        removeCachedResponse(forRequestOf: dataTask)
    }
}

extension URLCache {

    /// Where a `URLCache` may keep a response.
    public enum StoragePolicy: UInt, Sendable {

        /// In memory and on disk.
        case allowed

        /// In memory only.
        case allowedInMemoryOnly

        /// Not at all.
        case notAllowed
    }
}
