import Foundation
import Synchronization

/// A thread-safe store of HTTP cookies that decides which cookies go with which request.
///
/// A cookie replaces a stored cookie with the same name, domain and path; storing an already
/// expired cookie deletes its stored twin. Every change posts
/// `NSNotification.Name.NSHTTPCookieManagerCookiesChanged` on `NotificationCenter.default` with
/// the storage as the object.
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
        var nextSequence: UInt64 = 0
        var acceptPolicy: HTTPCookie.AcceptPolicy = .always

        /// Drops every cookie that has expired at `date`; returns whether anything was dropped.
        mutating func purgeExpired(at date: Date) -> Bool {
            let before = entries.count
            entries = entries.filter { !$0.value.cookie.isExpired(at: date) }
            return entries.count != before
        }
    }

    private let state = Mutex(State())

    private static let sharedStorage = HTTPCookieStorage()
    private static let groupStorages = Mutex<[String: HTTPCookieStorage]>([:])

    /// Creates an empty, private cookie store (used by ephemeral sessions).
    override init() {
        super.init()
    }

    /// Every stored cookie that has not expired, oldest first.
    open var cookies: [HTTPCookie]? {
        let now = Date()
        let (result, changed) = state.withLock { state in
            let changed = state.purgeExpired(at: now)
            let cookies = state.entries.values.sorted { $0.sequence < $1.sequence }.map(\.cookie)
            return (cookies, changed)
        }
        if changed { postChangeNotification() }
        return result
    }

    /// The process-wide cookie store used by the shared session and by default configurations.
    ///
    /// For now it lives in memory only and starts empty in every process; persisting it to disk
    /// is planned for a later issue.
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
        let changed = state.withLock { state -> Bool in
            guard state.acceptPolicy != .never else { return false }
            return Self.store(cookie, in: &state, at: now)
        }
        if changed { postChangeNotification() }
    }

    /// Puts one cookie into the locked state; returns whether the store changed.
    private static func store(_ cookie: HTTPCookie, in state: inout State, at date: Date) -> Bool {
        let identity = Identity(cookie)
        if cookie.isExpired(at: date) {
            return state.entries.removeValue(forKey: identity) != nil
        }
        state.entries[identity] = Entry(cookie: cookie, storedAt: date, sequence: state.nextSequence)
        state.nextSequence &+= 1
        return true
    }

    /// A summary of the storage and how many cookies it holds.
    override open var description: String {
        let count = state.withLock { $0.entries.count }
        return "<\(type(of: self)) cookies count:\(count)>"
    }

    /// Removes the stored cookie with the same name, domain and path as `cookie`.
    ///
    /// - Parameter cookie: The cookie to remove.
    open func deleteCookie(_ cookie: HTTPCookie) {
        let removed = state.withLock { $0.entries.removeValue(forKey: Identity(cookie)) != nil }
        if removed { postChangeNotification() }
    }

    /// Removes every cookie that was stored at or after `date`.
    ///
    /// - Parameter date: The earliest storage date to remove.
    open func removeCookies(since date: Date) {
        let removed = state.withLock { state -> Bool in
            let before = state.entries.count
            state.entries = state.entries.filter { $0.value.storedAt < date }
            return state.entries.count != before
        }
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
        let matching = state.withLock { state in
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
        let changed = state.withLock { state -> Bool in
            switch state.acceptPolicy {
            case .never:
                return false
            case .onlyFromMainDocumentDomain:
                if let mainDocumentURL {
                    guard let mainHost = mainDocumentURL.host?.lowercased(),
                          Self.sameDomain(host, mainHost) else { return false }
                }
            case .always:
                break
            }
            var changed = false
            for cookie in cookies where cookie.matches(host: host) {
                changed = Self.store(cookie, in: &state, at: now) || changed
            }
            return changed
        }
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
