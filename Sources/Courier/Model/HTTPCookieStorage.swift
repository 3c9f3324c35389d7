import Foundation

/// A thread-safe store of HTTP cookies that decides which cookies go with which request.
///
/// A cookie replaces a stored cookie with the same name, domain and path; storing an already
/// expired cookie deletes its stored twin. The storage keeps browsers' limits (`CookieJarLimits`):
/// a cookie whose name and value exceed 4096 bytes is refused, and beyond 180 cookies for a domain or
/// 3000 in all the expired, then the longest-stored cookies are evicted. Every change posts
/// `NSNotification.Name.NSHTTPCookieManagerCookiesChanged` on `NotificationCenter.default` with
/// the storage as the object.
///
/// `shared` keeps its cookies that are not session-only in a file (see `shared`); every other
/// storage, such as the one each ephemeral session gets, lives in memory only.
open class HTTPCookieStorage: NSObject, @unchecked Sendable {

    /// What identifies a stored cookie: a cookie with the same three values replaces it.
    private struct Identity: Hashable {
        let name: String
        let domain: String
        let path: String

        init(_ cookie: HTTPCookie) {
            name = cookie.name
            domain = cookie.domain
            path = cookie.path
        }
    }

    /// A stored cookie plus bookkeeping.
    private struct Entry {
        let cookie: HTTPCookie
        /// When the cookie was put into this storage (used by `removeCookies(since:)`).
        let storedAt: Date
        /// Insertion order; breaks ties when sorting (older first, as RFC 6265 5.4 asks).
        let sequence: UInt64
    }

    private struct State {
        var entries: [Identity: Entry] = [:]
        /// The identities of `entries`, by ``CookieJarLimits/domainKey(_:)``.
        var byDomain: [String: Set<Identity>] = [:]
        var nextSequence: UInt64 = 0
        var acceptPolicy: HTTPCookie.AcceptPolicy = .always
        /// Whether the file (if any) has been read into `entries`.
        var loaded: Bool
        /// Counts changes to cookies that are not session-only: those are what the file holds.
        var persistentRevision: UInt64 = 0

        /// Drops every cookie that has expired at `date`; returns whether anything was dropped.
        mutating func purgeExpired(at date: Date) -> Bool {
            removeEntries { $0.cookie.isExpired(at: date) }
        }

        /// Adds or replaces an entry.
        mutating func insert(_ entry: Entry, for identity: Identity) {
            let previous = entries.updateValue(entry, forKey: identity)
            byDomain[CookieJarLimits.domainKey(identity.domain), default: []].insert(identity)
            notePersistentChange(entry.cookie, previous?.cookie)
        }

        /// Removes the entry with `identity`; returns whether there was one.
        mutating func removeEntry(_ identity: Identity) -> Bool {
            guard let removed = entries.removeValue(forKey: identity) else { return false }
            unindex(identity)
            notePersistentChange(removed.cookie)
            return true
        }

        private mutating func unindex(_ identity: Identity) {
            let key = CookieJarLimits.domainKey(identity.domain)
            byDomain[key]?.remove(identity)
            if byDomain[key]?.isEmpty == true { byDomain[key] = nil }
        }

        /// Evicts cookies beyond ``CookieJarLimits`` after `kept` was stored: first past the limit
        /// for `kept`'s domain, then past the total; expired cookies go first, then the oldest.
        /// Returns whether anything was evicted.
        mutating func evictBeyondLimits(keeping kept: Identity, at date: Date) -> Bool {
            var evicted = false
            let key = CookieJarLimits.domainKey(kept.domain)
            while let domain = byDomain[key], domain.count > CookieJarLimits.maximumCookiesPerDomain,
                  let victim = eviction(among: domain, keeping: kept, at: date) {
                evicted = removeEntry(victim) || evicted
            }
            while entries.count > CookieJarLimits.maximumCookies,
                  let victim = eviction(among: entries.keys, keeping: kept, at: date) {
                evicted = removeEntry(victim) || evicted
            }
            return evicted
        }

        /// The cookie to evict among `identities`: an expired one, else the one stored longest ago.
        private func eviction<Identities: Sequence>(among identities: Identities, keeping kept: Identity,
                                                    at date: Date) -> Identity? where Identities.Element == Identity {
            var oldest: (identity: Identity, sequence: UInt64)?
            for identity in identities where identity != kept {
                guard let entry = entries[identity] else { continue }
                if entry.cookie.isExpired(at: date) { return identity }
                if oldest.map({ entry.sequence < $0.sequence }) ?? true { oldest = (identity, entry.sequence) }
            }
            return oldest?.identity
        }

        /// Removes every entry `shouldRemove` selects; returns whether any was removed.
        mutating func removeEntries(where shouldRemove: (Entry) -> Bool) -> Bool {
            let removed = entries.filter { shouldRemove($0.value) }
            guard !removed.isEmpty else { return false }
            for (identity, entry) in removed {
                entries.removeValue(forKey: identity)
                unindex(identity)
                notePersistentChange(entry.cookie)
            }
            return true
        }

        private mutating func notePersistentChange(_ cookies: HTTPCookie?...) {
            if cookies.contains(where: { $0.map { !$0.isSessionOnly } ?? false }) {
                persistentRevision &+= 1
            }
        }
    }

    private let state: Locked<State>

    /// Writes the cookie file; `nil` for a storage that lives in memory only.
    private let writer: StoreFileWriter?

    /// How long a change to a persistent storage waits for more changes before the file is written.
    static let defaultWriteDelay: TimeInterval = 0.5

    private static let sharedStorage = HTTPCookieStorage(fileURL: CourierDataDirectory.cookiesFile)
    private static let groupStorages = Locked<[String: HTTPCookieStorage]>([:])

    /// Creates an empty, private cookie store that lives in memory only (used by ephemeral
    /// sessions).
    override init() {
        state = Locked(State(loaded: true))
        writer = nil
        super.init()
    }

    /// Creates a cookie store that keeps its cookies that are not session-only in `fileURL`.
    ///
    /// The file is read on first use; a missing file means no cookies, a damaged one is ignored
    /// (and replaced by the next write), and expired cookies are dropped. Changes are written
    /// atomically, `writeDelay` seconds after the first change of a burst, or at `flush()`.
    ///
    /// - Parameters:
    ///   - fileURL: The cookie file.
    ///   - writeDelay: The coalescing delay before a change is written, in seconds.
    init(fileURL: URL, writeDelay: TimeInterval = HTTPCookieStorage.defaultWriteDelay) {
        state = Locked(State(loaded: false))
        writer = StoreFileWriter(file: StoreFile(url: fileURL, ownerOnly: false), delay: writeDelay)
        super.init()
    }

    /// The file this storage persists to, or `nil` for a memory-only storage.
    var fileURL: URL? { writer?.file.url }

    /// Writes pending changes to the cookie file before returning (nothing to do for a
    /// memory-only storage). Must not be called while holding the storage's lock.
    func flush() {
        writer?.flush()
    }

    /// Runs `body` on the locked state, reading the cookie file first if that has not happened.
    private func withState<Value: Sendable>(_ body: (inout State) -> Value) -> Value {
        state.withLock { state in
            loadIfNeeded(&state)
            return body(&state)
        }
    }

    /// Reads the cookie file into the locked state (once).
    private func loadIfNeeded(_ state: inout State) {
        guard !state.loaded else { return }
        state.loaded = true
        guard let writer else { return }
        let decoded: CookieStoreFile.Decoded?
        switch writer.file.read() {
        case .missing:
            return
        case .contents(let data):
            decoded = CookieStoreFile.decode(data)
        case .refused, .unreadable:
            decoded = nil
        }
        var evicted = false
        for stored in decoded?.cookies ?? [] {
            let identity = Identity(stored.cookie)
            state.insert(Entry(cookie: stored.cookie, storedAt: stored.storedAt, sequence: state.nextSequence), for: identity)
            state.nextSequence &+= 1
            evicted = state.evictBeyondLimits(keeping: identity, at: Date()) || evicted
        }
        // A damaged file, or one holding cookies that are no longer worth keeping, is replaced.
        if decoded?.droppedSome ?? true || evicted {
            writer.setNeedsWrite { [self] in persistentSnapshot() }
        }
    }

    /// Schedules a write of the cookie file when `revision` differs from the state's.
    private func persistIfChanged(since revision: UInt64, now revisionAfter: UInt64) {
        guard revision != revisionAfter, let writer else { return }
        writer.setNeedsWrite { [self] in persistentSnapshot() }
    }

    /// The cookie file's contents for the current state.
    private func persistentSnapshot() -> Data? {
        let stored = withState { state in
            state.entries.values
                .sorted { $0.sequence < $1.sequence }
                .map { CookieStoreFile.Stored(cookie: $0.cookie, storedAt: $0.storedAt) }
        }
        return CookieStoreFile.encode(stored)
    }

    /// Every stored cookie that has not expired, oldest first.
    open var cookies: [HTTPCookie]? {
        let now = Date()
        let (result, changed, revisions) = withState { state in
            let revision = state.persistentRevision
            let changed = state.purgeExpired(at: now)
            let cookies = state.entries.values.sorted { $0.sequence < $1.sequence }.map(\.cookie)
            return (cookies, changed, (revision, state.persistentRevision))
        }
        persistIfChanged(since: revisions.0, now: revisions.1)
        if changed { postChangeNotification() }
        return result
    }

    /// The process-wide cookie store used by the shared session and by default configurations.
    ///
    /// Its cookies that are not session-only survive the process: they are kept in
    /// `Cookies.json` in Courier's data directory — `$COURIER_DATA_HOME` when that variable is an
    /// absolute path, else `$XDG_DATA_HOME/Courier`, else `~/.local/share/Courier` — created with
    /// mode 0700, the file with mode 0600. The file is read the first time the storage is used
    /// (expired cookies are dropped, a damaged file is ignored and replaced) and rewritten
    /// atomically shortly after each change. Session-only cookies are never written.
    open class var shared: HTTPCookieStorage { sharedStorage }

    /// The cookie store shared by every caller that names the same group container.
    ///
    /// Linux has no app groups, so each identifier simply maps to its own in-memory store that
    /// lives for the whole process.
    ///
    /// - Parameter identifier: The group container's identifier.
    open class func sharedCookieStorage(forGroupContainerIdentifier identifier: String) -> HTTPCookieStorage {
        groupStorages.withLock { storages in
            if let existing = storages[identifier] { return existing }
            let storage = HTTPCookieStorage()
            storages[identifier] = storage
            return storage
        }
    }

    /// Stores a cookie, replacing any cookie with the same name, domain and path.
    ///
    /// An expired cookie removes its stored twin and is not stored. Nothing happens when the
    /// accept policy is `.never`.
    ///
    /// - Parameter cookie: The cookie to store.
    open func setCookie(_ cookie: HTTPCookie) {
        let now = Date()
        let (changed, revisions) = withState { state -> (Bool, (UInt64, UInt64)) in
            let revision = state.persistentRevision
            guard state.acceptPolicy != .never else { return (false, (revision, revision)) }
            let changed = Self.store(cookie, in: &state, at: now)
            return (changed, (revision, state.persistentRevision))
        }
        persistIfChanged(since: revisions.0, now: revisions.1)
        if changed { postChangeNotification() }
    }

    /// Puts one cookie into the locked state; returns whether the store changed.
    private static func store(_ cookie: HTTPCookie, in state: inout State, at date: Date) -> Bool {
        let identity = Identity(cookie)
        if cookie.isExpired(at: date) {
            return state.removeEntry(identity)
        }
        guard CookieJarLimits.accepts(cookie) else { return false }
        state.insert(Entry(cookie: cookie, storedAt: date, sequence: state.nextSequence), for: identity)
        state.nextSequence &+= 1
        _ = state.evictBeyondLimits(keeping: identity, at: date)
        return true
    }

    /// A summary of the storage and how many cookies it holds.
    override open var description: String {
        let count = withState { $0.entries.count }
        return "<\(type(of: self)) cookies count:\(count)>"
    }

    /// Removes the stored cookie with the same name, domain and path as `cookie`.
    ///
    /// - Parameter cookie: The cookie to remove.
    open func deleteCookie(_ cookie: HTTPCookie) {
        let (removed, revisions) = withState { state in
            let revision = state.persistentRevision
            let removed = state.removeEntry(Identity(cookie))
            return (removed, (revision, state.persistentRevision))
        }
        persistIfChanged(since: revisions.0, now: revisions.1)
        if removed { postChangeNotification() }
    }

    /// Removes every cookie that was stored at or after `date`.
    ///
    /// - Parameter date: The earliest storage date to remove.
    open func removeCookies(since date: Date) {
        let (removed, revisions) = withState { state in
            let revision = state.persistentRevision
            let removed = state.removeEntries { $0.storedAt >= date }
            return (removed, (revision, state.persistentRevision))
        }
        persistIfChanged(since: revisions.0, now: revisions.1)
        if removed { postChangeNotification() }
    }

    /// The cookies to send with a request for `url`.
    ///
    /// A cookie is returned when its domain covers the URL's host, its path covers the URL's
    /// path, it is not `Secure` or the URL is `https`/`wss`, and it has not expired. Cookies with
    /// longer paths come first.
    ///
    /// - Parameter url: The URL about to be loaded.
    /// - Returns: The matching cookies (possibly none), or `nil` when the URL has no host.
    open func cookies(for url: URL) -> [HTTPCookie]? {
        guard let host = url.host, !host.isEmpty else { return nil }
        let now = Date()
        let matching = withState { state in
            state.entries.values.filter { $0.cookie.shouldBeSent(to: url, at: now) }
        }
        return matching
            .sorted { lhs, rhs in
                if lhs.cookie.path.count != rhs.cookie.path.count {
                    return lhs.cookie.path.count > rhs.cookie.path.count
                }
                return lhs.sequence < rhs.sequence
            }
            .map(\.cookie)
    }

    /// Whether this storage is exactly an `HTTPCookieStorage` (no subclass that may answer
    /// ``cookies(for:)`` itself) and holds no cookie: then no URL has cookies to send, and a
    /// handler need not ask (nor work out the URL's host) for every request.
    var certainlySendsNoCookies: Bool {
        type(of: self) == HTTPCookieStorage.self && withState { $0.entries.isEmpty }
    }

    /// Stores the cookies a response from `url` set, as the accept policy allows.
    ///
    /// With `.never` nothing is stored. With `.onlyFromMainDocumentDomain` the cookies are only
    /// stored when `url`'s host is in the same domain as `mainDocumentURL`'s host (one
    /// domain-matches the other); a `nil` main document URL allows them. Cookies whose domain does
    /// not cover `url`'s host are skipped.
    ///
    /// - Parameters:
    ///   - cookies: The cookies to store, typically from `HTTPCookie.cookies(withResponseHeaderFields:for:)`.
    ///   - url: The URL that set the cookies.
    ///   - mainDocumentURL: The URL of the page the load belongs to, if any.
    open func setCookies(_ cookies: [HTTPCookie], for url: URL?, mainDocumentURL: URL?) {
        guard let host = url?.host?.lowercased(), !host.isEmpty else { return }
        let now = Date()
        let (changed, revisions) = withState { state -> (Bool, (UInt64, UInt64)) in
            let revision = state.persistentRevision
            switch state.acceptPolicy {
            case .never:
                return (false, (revision, revision))
            case .onlyFromMainDocumentDomain:
                if let mainDocumentURL {
                    guard let mainHost = mainDocumentURL.host?.lowercased(),
                          Self.sameDomain(host, mainHost) else { return (false, (revision, revision)) }
                }
            case .always:
                break
            }
            var changed = false
            for cookie in cookies where cookie.matches(host: host) {
                changed = Self.store(cookie, in: &state, at: now) || changed
            }
            return (changed, (revision, state.persistentRevision))
        }
        persistIfChanged(since: revisions.0, now: revisions.1)
        if changed { postChangeNotification() }
    }

    /// Whether two hosts belong to the same domain: equal, or one a sub-domain of the other.
    private static func sameDomain(_ host: String, _ mainHost: String) -> Bool {
        SetCookieParser.domainMatches(host: host, domain: mainHost)
            || SetCookieParser.domainMatches(host: mainHost, domain: host)
    }

    /// Which cookies this storage accepts; `.always` by default.
    open var cookieAcceptPolicy: HTTPCookie.AcceptPolicy {
        get { state.withLock { $0.acceptPolicy } }
        set { state.withLock { $0.acceptPolicy = newValue } }
    }

    /// Every stored cookie, sorted by the given descriptors.
    ///
    /// Linux's `NSSortDescriptor` only knows key paths. Descriptors for `\HTTPCookie.name`,
    /// `\.domain`, `\.path` and `\.value` are compared as strings here; other descriptors are
    /// used when their key path starts at `HTTPCookie` (or `NSObject`) and skipped otherwise.
    /// Ties keep storage order.
    ///
    /// - Parameter sortOrder: The sort descriptors, most significant first.
    open func sortedCookies(using sortOrder: [NSSortDescriptor]) -> [HTTPCookie] {
        let all = cookies ?? []
        let comparators: [(HTTPCookie, HTTPCookie) -> ComparisonResult] = sortOrder.compactMap { descriptor in
            let ascending = descriptor.ascending
            let keyPath = descriptor.keyPath
            let stringKey: KeyPath<HTTPCookie, String>?
            switch keyPath {
            case \HTTPCookie.name: stringKey = \HTTPCookie.name
            case \HTTPCookie.domain: stringKey = \HTTPCookie.domain
            case \HTTPCookie.path: stringKey = \HTTPCookie.path
            case \HTTPCookie.value: stringKey = \HTTPCookie.value
            default: stringKey = nil
            }
            if let stringKey {
                return { lhs, rhs in
                    let result = lhs[keyPath: stringKey].compare(rhs[keyPath: stringKey])
                    return ascending ? result : Self.reversed(result)
                }
            }
            let root = type(of: keyPath).rootType
            guard root == HTTPCookie.self || root == NSObject.self else { return nil }
            return { lhs, rhs in descriptor.compare(lhs, to: rhs) }
        }
        guard !comparators.isEmpty else { return all }
        let indexed = Array(all.enumerated())
        return indexed.sorted { lhs, rhs in
            for comparator in comparators {
                switch comparator(lhs.element, rhs.element) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: continue
                }
            }
            return lhs.offset < rhs.offset
        }.map(\.element)
    }

    private static func reversed(_ result: ComparisonResult) -> ComparisonResult {
        switch result {
        case .orderedAscending: return .orderedDescending
        case .orderedDescending: return .orderedAscending
        case .orderedSame: return .orderedSame
        }
    }

    /// Posts the cookies-changed notification; always called without the lock held.
    private func postChangeNotification() {
        NotificationCenter.default.post(name: .NSHTTPCookieManagerCookiesChanged, object: self)
    }
}

extension NSNotification.Name {

    /// Posted by an `HTTPCookieStorage` (the notification's object) whenever its cookies change.
    public static let NSHTTPCookieManagerCookiesChanged = Notification.Name(rawValue: "NSHTTPCookieManagerCookiesChangedNotification")
}
