import Foundation

/// A response stored in a `URLCache`: the response, its body, optional user data and how it may
/// be stored.
///
/// Cached responses are immutable; two are equal when their responses, bodies and storage
/// policies are equal (`userInfo` cannot be compared and is ignored).
open class CachedURLResponse: NSObject, NSCopying, @unchecked Sendable {
    // These are never changed after `init` (the setters are private and unused), which keeps
    // the `@unchecked Sendable` promise.

    /// Returns the cached response itself; it is immutable.
    override open func copy() -> Any {
        copy(with: nil)
    }

    /// Returns the cached response itself; it is immutable.
    ///
    /// - Parameter zone: Ignored.
    open func copy(with zone: NSZone? = nil) -> Any {
        self
    }

    /// Creates a cached response that may be stored anywhere (`.allowed`).
    ///
    /// - Parameters:
    ///   - response: The response to cache.
    ///   - data: The response's body.
    public init(response: URLResponse, data: Data) {
        self.response = response
        self.data = data
        self.userInfo = nil
        self.storagePolicy = .allowed
        super.init()
    }

    /// Creates a cached response.
    ///
    /// - Parameters:
    ///   - response: The response to cache.
    ///   - data: The response's body.
    ///   - userInfo: Extra information kept with the entry in memory (never written to disk).
    ///   - storagePolicy: Where a `URLCache` may keep the entry.
    public init(response: URLResponse, data: Data, userInfo: [AnyHashable: Any]? = nil, storagePolicy: URLCache.StoragePolicy) {
        self.response = response
        self.data = data
        self.userInfo = userInfo
        self.storagePolicy = storagePolicy
        super.init()
    }

    /// The cached response.
    open private(set) var response: URLResponse

    /// The cached body.
    open private(set) var data: Data

    /// Extra information stored with the entry, if any.
    open private(set) var userInfo: [AnyHashable: Any]?

    /// Where a `URLCache` may keep the entry.
    open private(set) var storagePolicy: URLCache.StoragePolicy

    /// Whether `value` is a cached response with an equal response, body and storage policy.
    ///
    /// - Parameter value: The object to compare with.
    override open func isEqual(_ value: Any?) -> Bool {
        guard let other = value as? CachedURLResponse else { return false }
        if other === self { return true }
        return other.response.isEqual(response) && other.data == data && other.storagePolicy == storagePolicy
    }

    /// A hash consistent with `isEqual(_:)`.
    override open var hash: Int {
        var hasher = Hasher()
        hasher.combine(response.hash)
        hasher.combine(data.count) // hashing every byte of a large body would be wasteful
        hasher.combine(storagePolicy)
        return hasher.finalize()
    }
}
