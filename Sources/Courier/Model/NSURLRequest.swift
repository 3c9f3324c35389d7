import Foundation

/// An immutable URL load request, the reference counterpart of `URLRequest`.
///
/// `NSURLRequest` holds a `URLRequest` value and exposes it read-only; `NSMutableURLRequest` adds
/// setters. Prefer `URLRequest` in new code; the class exists for code written against the
/// Objective-C style API, for `URLProtocol.setProperty(_:forKey:in:)`, and for archiving.
open class NSURLRequest: NSObject, NSSecureCoding, NSCopying, NSMutableCopying {

    /// The request value this object wraps.
    internal var _request: URLRequest

    /// Wraps `request`.
    internal init(_ request: URLRequest) {
        _request = request
        super.init()
    }

    /// The wrapped value, as a `URLRequest`.
    internal var swiftValue: URLRequest { _request }

    // MARK: Creating a request

    /// Creates a request for `url` with the default cache policy and a 60-second timeout.
    ///
    /// - Parameter url: The URL to load.
    public convenience init(url: URL) {
        self.init(url: url, cachePolicy: .useProtocolCachePolicy, timeoutInterval: 60.0)
    }

    /// Creates a request for `url` with the given cache policy and timeout interval (seconds).
    ///
    /// - Parameters:
    ///   - url: The URL to load.
    ///   - cachePolicy: How the request interacts with the URL cache.
    ///   - timeoutInterval: The longest idle interval, in seconds, before the load times out.
    public init(url: URL, cachePolicy: NSURLRequest.CachePolicy, timeoutInterval: TimeInterval) {
        _request = URLRequest(url: url, cachePolicy: cachePolicy, timeoutInterval: timeoutInterval)
        super.init()
    }

    // MARK: Copying

    /// Returns `copy(with: nil)`.
    open override func copy() -> Any {
        copy(with: nil)
    }

    /// Returns an immutable copy of the request. An `NSURLRequest` (exactly that class) cannot
    /// change, so it returns itself.
    ///
    /// - Parameter zone: Ignored.
    open func copy(with zone: NSZone? = nil) -> Any {
        if type(of: self) === NSURLRequest.self {
            return self
        }
        return NSURLRequest(_request)
    }

    /// Returns `mutableCopy(with: nil)`.
    open override func mutableCopy() -> Any {
        mutableCopy(with: nil)
    }

    /// Returns a new `NSMutableURLRequest` holding the same request, protocol properties included.
    ///
    /// - Parameter zone: Ignored.
    open func mutableCopy(with zone: NSZone? = nil) -> Any {
        NSMutableURLRequest(_request)
    }

    // MARK: Coding

    /// Keys used in keyed archives.
    internal enum CodingKeys {
        static let url = "NS.url"
        static let mainDocumentURL = "NS.mainDocumentURL"
        static let cachePolicy = "NS.cachePolicy"
        static let timeoutInterval = "NS.timeoutInterval"
        static let httpMethod = "NS.httpMethod"
        static let headers = "NS.allHTTPHeaderFields"
        static let httpBody = "NS.httpBody"
        static let networkServiceType = "NS.networkServiceType"
        static let allowsCellularAccess = "NS.allowsCellularAccess"
        static let httpShouldHandleCookies = "NS.httpShouldHandleCookies"
        static let httpShouldUsePipelining = "NS.httpShouldUsePipelining"
    }

    /// Decodes a request archived by `encode(with:)`. Requires a keyed coder; returns `nil` if the
    /// archive is not keyed or holds values of the wrong type.
    ///
    /// - Parameter aDecoder: The unarchiver to read from.
    public required init?(coder aDecoder: NSCoder) {
        guard aDecoder.allowsKeyedCoding else { return nil }
        let url = NSURLRequest.decodeIfPresent(NSURL.self, forKey: CodingKeys.url, from: aDecoder).map { $0 as URL }
        let rawPolicy = aDecoder.decodeInteger(forKey: CodingKeys.cachePolicy)
        let policy = UInt(exactly: rawPolicy).flatMap(CachePolicy.init(rawValue:)) ?? .useProtocolCachePolicy
        let timeout = aDecoder.containsValue(forKey: CodingKeys.timeoutInterval)
            ? aDecoder.decodeDouble(forKey: CodingKeys.timeoutInterval) : 60.0
        var request = URLRequest(optionalURL: url, cachePolicy: policy, timeoutInterval: timeout)

        if let main = NSURLRequest.decodeIfPresent(NSURL.self, forKey: CodingKeys.mainDocumentURL, from: aDecoder) {
            request.mainDocumentURL = main as URL
        }
        if let method = NSURLRequest.decodeIfPresent(NSString.self, forKey: CodingKeys.httpMethod, from: aDecoder) {
            request.httpMethod = method as String
        }
        if aDecoder.containsValue(forKey: CodingKeys.headers) {
            guard let object = aDecoder.decodeObject(of: [NSDictionary.self, NSString.self], forKey: CodingKeys.headers),
                  let dictionary = object as? NSDictionary
            else { return nil }
            var headers: [String: String] = [:]
            for (key, value) in dictionary {
                guard let name = (key as? NSString).map(String.init) ?? key as? String,
                      let text = (value as? NSString).map(String.init) ?? value as? String
                else { return nil }
                headers[name] = text
            }
            request.allHTTPHeaderFields = headers
        }
        if let body = NSURLRequest.decodeIfPresent(NSData.self, forKey: CodingKeys.httpBody, from: aDecoder) {
            request.httpBody = Data(referencing: body)
        }
        let rawService = aDecoder.decodeInteger(forKey: CodingKeys.networkServiceType)
        request.networkServiceType = UInt(exactly: rawService).flatMap(NetworkServiceType.init(rawValue:)) ?? .default
        if aDecoder.containsValue(forKey: CodingKeys.allowsCellularAccess) {
            request.allowsCellularAccess = aDecoder.decodeBool(forKey: CodingKeys.allowsCellularAccess)
        }
        if aDecoder.containsValue(forKey: CodingKeys.httpShouldHandleCookies) {
            request.httpShouldHandleCookies = aDecoder.decodeBool(forKey: CodingKeys.httpShouldHandleCookies)
        }
        request._shouldUsePipelining = aDecoder.decodeBool(forKey: CodingKeys.httpShouldUsePipelining)
        _request = request
        super.init()
    }

    /// Archives the request with keyed coding. The body stream and protocol properties are not
    /// archived (as with Apple's implementation, a body stream is lost by coding).
    ///
    /// - Parameter aCoder: The archiver to write to; must support keyed coding.
    open func encode(with aCoder: NSCoder) {
        guard aCoder.allowsKeyedCoding else { return }
        if let url = _request.url {
            aCoder.encode(url as NSURL, forKey: CodingKeys.url)
        }
        if let main = _request.mainDocumentURL {
            aCoder.encode(main as NSURL, forKey: CodingKeys.mainDocumentURL)
        }
        aCoder.encode(Int(_request.cachePolicy.rawValue), forKey: CodingKeys.cachePolicy)
        aCoder.encode(_request.timeoutInterval, forKey: CodingKeys.timeoutInterval)
        if let method = _request.httpMethod {
            aCoder.encode(NSString(string: method), forKey: CodingKeys.httpMethod)
        }
        if let headers = _request.allHTTPHeaderFields {
            let dictionary = NSMutableDictionary()
            for (name, value) in headers {
                dictionary.setObject(NSString(string: value), forKey: NSString(string: name))
            }
            aCoder.encode(dictionary, forKey: CodingKeys.headers)
        }
        if let body = _request.httpBody {
            aCoder.encode(NSData(data: body), forKey: CodingKeys.httpBody)
        }
        aCoder.encode(Int(_request.networkServiceType.rawValue), forKey: CodingKeys.networkServiceType)
        aCoder.encode(_request.allowsCellularAccess, forKey: CodingKeys.allowsCellularAccess)
        aCoder.encode(_request.httpShouldHandleCookies, forKey: CodingKeys.httpShouldHandleCookies)
        aCoder.encode(_request._shouldUsePipelining, forKey: CodingKeys.httpShouldUsePipelining)
    }

    /// Decodes the object stored under `key`, or `nil` when the archive has no such key (keyed
    /// unarchivers report a missing key as a decoding error otherwise).
    private static func decodeIfPresent<T: NSObject & NSCoding>(_ type: T.Type, forKey key: String, from coder: NSCoder) -> T? {
        guard coder.containsValue(forKey: key) else { return nil }
        return coder.decodeObject(of: type, forKey: key)
    }

    /// `true`: requests decode only the classes they expect.
    open class var supportsSecureCoding: Bool { true }

    // MARK: Equality

    /// Whether `object` is an `NSURLRequest` holding an equal request (see `URLRequest.==`).
    ///
    /// - Parameter object: The object to compare with.
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSURLRequest else { return false }
        return other === self || other._request == _request
    }

    /// A hash of the wrapped request, consistent with `isEqual(_:)`.
    open override var hash: Int {
        _request.hashValue
    }

    // MARK: Properties

    /// The URL to load.
    open var url: URL? { _request.url }

    /// The URL of the main document this load belongs to, used by the cookie policy that only
    /// accepts cookies from the main document's domain.
    open var mainDocumentURL: URL? { _request.mainDocumentURL }

    /// How the request interacts with the URL cache.
    open var cachePolicy: NSURLRequest.CachePolicy { _request.cachePolicy }

    /// The longest idle interval, in seconds, before the load fails with `URLError.timedOut`.
    open var timeoutInterval: TimeInterval { _request.timeoutInterval }

    /// The HTTP method; `"GET"` unless set otherwise.
    open var httpMethod: String? { _request.httpMethod }

    /// All header fields, keyed by the first spelling used for each name; `nil` if none was set.
    open var allHTTPHeaderFields: [String: String]? { _request.allHTTPHeaderFields }

    /// Returns the value of the header `field`, compared case-insensitively, or `nil`.
    ///
    /// - Parameter field: The header name (case-insensitive).
    /// - Returns: The header's value, or `nil` if the request has no such header.
    open func value(forHTTPHeaderField field: String) -> String? {
        _request.value(forHTTPHeaderField: field)
    }

    /// The message body bytes, or `nil` if the request has no body or a body stream.
    open var httpBody: Data? { _request.httpBody }

    /// The stream the message body is read from, or `nil` if the request has none.
    open var httpBodyStream: InputStream? { _request.httpBodyStream }

    /// The kind of traffic the request carries.
    open var networkServiceType: NSURLRequest.NetworkServiceType { _request.networkServiceType }

    /// Whether the load may use a cellular interface (recorded only; no effect on Linux).
    open var allowsCellularAccess: Bool { _request.allowsCellularAccess }

    /// Whether cookies are sent with the request and cookies it receives are stored.
    open var httpShouldHandleCookies: Bool { _request.httpShouldHandleCookies }

    /// Whether the request may be pipelined behind an unanswered request (recorded only).
    @available(swift, deprecated: 6.1, message: "HTTP/1 pipelining has known compatibility issues, please adopt HTTP/2 and HTTP/3 instead")
    open var httpShouldUsePipelining: Bool { _request._shouldUsePipelining }

    /// The class name, address and URL of the request, for logs.
    open override var description: String {
        let address = UInt(bitPattern: ObjectIdentifier(self))
        return "<\(type(of: self)): 0x\(String(address, radix: 16))> { URL: \(_request.description) }"
    }
}

extension NSURLRequest {

    /// How a request interacts with the URL cache. Raw values are Apple's.
    public enum CachePolicy: UInt, Sendable {

        /// Use the caching rules of the URL's protocol (for HTTP, its cache-control headers).
        /// The default.
        case useProtocolCachePolicy = 0

        /// Ignore any cached data and load from the origin.
        case reloadIgnoringLocalCacheData = 1

        /// Ignore local cached data and ask intermediaries (proxies) to ignore theirs too, as far
        /// as the protocol allows. Courier treats it as `reloadIgnoringLocalCacheData`.
        case reloadIgnoringLocalAndRemoteCacheData = 4

        /// Former name of `reloadIgnoringLocalCacheData`.
        public static var reloadIgnoringCacheData: NSURLRequest.CachePolicy { .reloadIgnoringLocalCacheData }

        /// Use cached data whatever its age; load from the origin only when nothing is cached.
        case returnCacheDataElseLoad = 2

        /// Use cached data whatever its age and never load from the origin; the load fails when
        /// nothing is cached (an "offline" mode).
        case returnCacheDataDontLoad = 3

        /// Use cached data only after the origin confirms it is still valid; otherwise load it.
        case reloadRevalidatingCacheData = 5
    }

    /// The kind of traffic a request carries, a hint for scheduling. Raw values are Apple's.
    public enum NetworkServiceType: UInt, Sendable {

        /// Ordinary traffic. The default.
        case `default` = 0

        /// Voice-over-IP control traffic.
        case voip = 1

        /// Video traffic.
        case video = 2

        /// Background traffic such as prefetching.
        case background = 3

        /// Voice traffic.
        case voice = 4

        /// Call-signalling traffic.
        case networkServiceTypeCallSignaling = 11
    }
}

extension URLRequest: _ObjectiveCBridgeable {

    /// The reference type this value bridges to.
    public typealias _ObjectiveCType = NSURLRequest

    /// Returns an `NSURLRequest` holding this value (used by `as` casts).
    public func _bridgeToObjectiveC() -> NSURLRequest {
        NSURLRequest(self)
    }

    /// Sets `result` to the value held by `source` (used by `as!` casts).
    public static func _forceBridgeFromObjectiveC(_ source: NSURLRequest, result: inout URLRequest?) {
        result = source._request
    }

    /// Sets `result` to the value held by `source` and returns `true` (used by `as?` casts).
    @discardableResult
    public static func _conditionallyBridgeFromObjectiveC(_ source: NSURLRequest, result: inout URLRequest?) -> Bool {
        result = source._request
        return true
    }

    /// Returns the value held by `source`; a `nil` source gives a request with no URL.
    public static func _unconditionallyBridgeFromObjectiveC(_ source: NSURLRequest?) -> URLRequest {
        source?._request ?? URLRequest(optionalURL: nil)
    }
}
