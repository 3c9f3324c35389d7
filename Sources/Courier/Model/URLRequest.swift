import Foundation

/// A description of one URL load: the URL, the HTTP method, headers and body, and the policies
/// (caching, timeout, cookies…) the loading system applies while performing it.
///
/// `URLRequest` is a value type: copies are independent, and mutating one never affects another.
/// It is the value counterpart of `NSURLRequest` / `NSMutableURLRequest`.
///
/// To stay cheap to copy, the frequently used fields (URL, method, headers, body) are stored inline
/// and the rarely changed ones (policies, timeout, protocol properties) share one copy-on-write
/// storage object; requests created with the default policies all share a single storage instance.
public struct URLRequest: ReferenceConvertible, Equatable, Hashable, Sendable {

    /// The reference type this value bridges to: `NSURLRequest`.
    public typealias ReferenceType = NSURLRequest

    /// The cache policies a request can use; see `NSURLRequest.CachePolicy`.
    public typealias CachePolicy = NSURLRequest.CachePolicy

    /// The network service types a request can declare; see `NSURLRequest.NetworkServiceType`.
    public typealias NetworkServiceType = NSURLRequest.NetworkServiceType

    // MARK: Stored state

    /// The URL to load (`nil` only for requests decoded without one).
    public var url: URL?

    /// The HTTP method, already normalised; `"GET"` by default.
    private var _method: String

    /// The header fields; `nil` until a header is first set (as Apple reports `nil` for a new
    /// request and `[:]` once headers have been touched and removed).
    private var _headers: HTTPHeaderFields?

    /// The body: nothing, bytes, or a stream — never both bytes and a stream.
    private var _body: Body

    /// Rarely changed fields and protocol properties, shared copy-on-write.
    private var _storage: Storage

    // MARK: Creating a request

    /// Creates a request for `url` using the given cache policy and timeout interval (in seconds).
    ///
    /// A URL relative to a base URL is stored as its `absoluteURL` (as Apple's and
    /// FoundationNetworking's requests do), so `url` has no `baseURL`.
    ///
    /// - Parameters:
    ///   - url: The URL to load.
    ///   - cachePolicy: How the request interacts with the URL cache; `.useProtocolCachePolicy` by default.
    ///   - timeoutInterval: The longest idle time, in seconds, before the load fails with
    ///     `URLError.timedOut`; 60 by default.
    public init(url: URL, cachePolicy: URLRequest.CachePolicy = .useProtocolCachePolicy, timeoutInterval: TimeInterval = 60.0) {
        self.init(optionalURL: url.baseURL == nil ? url : url.absoluteURL, cachePolicy: cachePolicy, timeoutInterval: timeoutInterval)
    }

    /// Creates a request whose URL may be absent (used when decoding an archived `NSURLRequest`).
    internal init(optionalURL url: URL?, cachePolicy: URLRequest.CachePolicy = .useProtocolCachePolicy, timeoutInterval: TimeInterval = 60.0) {
        self.url = url
        self._method = "GET"
        self._headers = nil
        self._body = .none
        if cachePolicy == Storage.shared.cachePolicy && timeoutInterval == Storage.shared.timeoutInterval {
            self._storage = Storage.shared
        } else {
            let storage = Storage()
            storage.cachePolicy = cachePolicy
            storage.timeoutInterval = timeoutInterval
            self._storage = storage
        }
    }

    /// Creates a request holding the same value as the given reference object.
    internal init(_ reference: NSURLRequest) {
        self = reference._request
    }

    // MARK: Policies

    /// How the request interacts with the URL cache.
    public var cachePolicy: URLRequest.CachePolicy {
        get { _storage.cachePolicy }
        set { mutateStorage { $0.cachePolicy = newValue } }
    }

    /// The longest interval, in seconds, that the load may stay idle (no bytes sent or received)
    /// before it fails with `URLError.timedOut`. Each bit of activity restarts the interval.
    public var timeoutInterval: TimeInterval {
        get { _storage.timeoutInterval }
        set { mutateStorage { $0.timeoutInterval = newValue } }
    }

    /// The URL of the main document this load belongs to, used by the "only from the main
    /// document's domain" cookie policy.
    public var mainDocumentURL: URL? {
        get { _storage.mainDocumentURL }
        set { mutateStorage { $0.mainDocumentURL = newValue } }
    }

    /// The kind of traffic this request carries; `.default` unless set.
    public var networkServiceType: URLRequest.NetworkServiceType {
        get { _storage.networkServiceType }
        set { mutateStorage { $0.networkServiceType = newValue } }
    }

    /// Whether the load may use a cellular interface. Courier records it; Linux has no such
    /// distinction, so it does not restrict the load. `true` by default.
    public var allowsCellularAccess: Bool {
        get { _storage.allowsCellularAccess }
        set { mutateStorage { $0.allowsCellularAccess = newValue } }
    }

    // MARK: HTTP

    /// The HTTP method, `"GET"` by default.
    ///
    /// Setting `nil` restores `"GET"`. The standard methods GET, HEAD, POST, PUT, DELETE and CONNECT
    /// are normalised to upper case whatever case they are given in; other methods are kept as given.
    public var httpMethod: String? {
        get { _method }
        set { _method = Self.normalizedMethod(newValue) }
    }

    /// ``httpMethod`` in upper case, as the handlers compare and send it. `GET` (nearly every
    /// request) is returned as it is: comparing a small string is a few instructions, upper-casing
    /// one about 120, and the handlers ask five times per load.
    internal var uppercasedHTTPMethod: String {
        _method == "GET" ? _method : _method.uppercased()
    }

    /// All header fields of the request, keyed by the spelling under which each name was first
    /// set; `nil` if no header was ever set. Assigning replaces every header; an entry whose value
    /// `setValue(_:forHTTPHeaderField:)` would drop (a NUL or line break) is left out.
    public var allHTTPHeaderFields: [String: String]? {
        get { _headers?.dictionary }
        set { _headers = newValue.map { HTTPHeaderFields($0.filter { HTTPHeaderValueValidity.isValid($0.value) }) } }
    }

    /// Returns the value of the header `field`, compared case-insensitively, or `nil`.
    ///
    /// - Parameter field: The header name to look up (case-insensitive).
    public func value(forHTTPHeaderField field: String) -> String? {
        _headers?.value(for: field)
    }

    /// Sets the header `field` to `value`, replacing any previous value; `nil` removes the header.
    /// Names are compared case-insensitively; the first spelling used for a name is kept.
    ///
    /// A value holding NUL, or CR or LF other than a folded line (CRLF then a space or tab), is
    /// ignored and the request is left as it was, as FoundationNetworking does.
    ///
    /// - Parameters:
    ///   - value: The new value, or `nil` to remove the header.
    ///   - field: The header name (case-insensitive).
    public mutating func setValue(_ value: String?, forHTTPHeaderField field: String) {
        if let value, !HTTPHeaderValueValidity.isValid(value) { return }
        if _headers == nil {
            _headers = HTTPHeaderFields()
        }
        _headers?.set(value, for: field)
    }

    /// Adds `value` to the header `field`: if the header already has a value, the two are joined
    /// with a comma (do not add one yourself); otherwise the header is created. A value that
    /// `setValue(_:forHTTPHeaderField:)` would ignore is ignored here too.
    ///
    /// - Parameters:
    ///   - value: The value to append.
    ///   - field: The header name (case-insensitive).
    public mutating func addValue(_ value: String, forHTTPHeaderField field: String) {
        guard HTTPHeaderValueValidity.isValid(value) else { return }
        if _headers == nil {
            _headers = HTTPHeaderFields()
        }
        _headers?.add(value, for: field)
    }

    /// The bytes sent as the request's message body, for example in a POST.
    ///
    /// A request has either a data body or a body stream; setting a non-nil `httpBody` removes
    /// `httpBodyStream`.
    public var httpBody: Data? {
        get {
            if case .data(let data) = _body { return data }
            return nil
        }
        set {
            if let newValue {
                _body = .data(newValue)
            } else if case .data = _body {
                _body = .none
            }
        }
    }

    /// A stream the message body is read from, for bodies too large or too dynamic to hold in
    /// memory. Do not read from or otherwise use the stream yourself once it is set.
    ///
    /// A request has either a body stream or a data body; setting a non-nil stream removes
    /// `httpBody`. The stream is shared by copies of the request and is not archived by `NSCoding`.
    public var httpBodyStream: InputStream? {
        get {
            if case .stream(let box) = _body { return box.stream }
            return nil
        }
        set {
            if let newValue {
                _body = .stream(BodyStreamBox(newValue))
            } else if case .stream = _body {
                _body = .none
            }
        }
    }

    /// Whether stored cookies are sent with this request and cookies it receives are stored;
    /// `true` by default.
    public var httpShouldHandleCookies: Bool {
        get { _storage.httpShouldHandleCookies }
        set { mutateStorage { $0.httpShouldHandleCookies = newValue } }
    }

    /// Whether the request may be sent before the response to a previous request on the same
    /// connection has arrived (HTTP/1.1 pipelining); `false` by default. Courier records it but
    /// never pipelines.
    @available(swift, deprecated: 6.1, message: "HTTP/1 pipelining has known compatibility issues, please adopt HTTP/2 and HTTP/3 instead")
    public var httpShouldUsePipelining: Bool {
        get { _shouldUsePipelining }
        set { _shouldUsePipelining = newValue }
    }

    /// Non-deprecated access to `httpShouldUsePipelining` for Courier's own code.
    internal var _shouldUsePipelining: Bool {
        get { _storage.httpShouldUsePipelining }
        set { mutateStorage { $0.httpShouldUsePipelining = newValue } }
    }

    // MARK: Internal access

    /// The header fields in the order they were set, with their first-seen spelling, for the
    /// layers that write requests on the wire. Empty if no header was set.
    internal var headerFields: HTTPHeaderFields {
        get { _headers ?? HTTPHeaderFields() }
        set { _headers = newValue }
    }

    // MARK: Protocol properties (URLProtocol.property(forKey:in:) and friends)

    /// Returns the protocol property stored under `key`, or `nil`.
    internal func protocolProperty(forKey key: String) -> Any? {
        _storage.properties[key]
    }

    /// Stores `value` as the protocol property `key`, replacing any previous value.
    internal mutating func setProtocolProperty(_ value: Any, forKey key: String) {
        mutateStorage { $0.properties[key] = value }
    }

    /// Removes the protocol property `key`, if present.
    internal mutating func removeProtocolProperty(forKey key: String) {
        guard _storage.properties[key] != nil else { return }
        mutateStorage { $0.properties[key] = nil }
    }

    // MARK: Equatable & Hashable

    /// Feeds the request's URL, method, headers, body and policies into `hasher`.
    /// Protocol properties do not take part.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(url)
        hasher.combine(_method)
        hasher.combine(_headers)
        hasher.combine(_body)
        _storage.hashPolicies(into: &hasher)
    }

    /// Two requests are equal when their URL, method, headers (names compared case-insensitively),
    /// body (a body stream by identity) and policies are equal. Protocol properties do not take part.
    public static func == (lhs: URLRequest, rhs: URLRequest) -> Bool {
        lhs.url == rhs.url
            && lhs._method == rhs._method
            && lhs._headers == rhs._headers
            && lhs._body == rhs._body
            && (lhs._storage === rhs._storage || lhs._storage.policiesEqual(rhs._storage))
    }

    // MARK: - Private helpers

    /// Runs `body` on storage that this value owns alone, copying the shared storage first.
    private mutating func mutateStorage(_ body: (Storage) -> Void) {
        if !isKnownUniquelyReferenced(&_storage) {
            _storage = _storage.copy()
        }
        body(_storage)
    }

    /// Upper-cases the standard methods and maps `nil` to `"GET"`.
    private static func normalizedMethod(_ method: String?) -> String {
        guard let method else { return "GET" }
        for standard in ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT"]
        where standard.utf8.count == method.utf8.count && standard.caseInsensitiveCompare(method) == .orderedSame {
            return standard
        }
        return method
    }

    /// The message body of a request.
    private enum Body: Hashable, Sendable {
        case none
        case data(Data)
        case stream(BodyStreamBox)
    }

    /// Holds a body stream so `URLRequest` can stay `Sendable`.
    ///
    /// `InputStream` is not `Sendable`. As with Apple's `URLRequest`, the stream is handed to the
    /// loading system, which is the only party that reads it (callers are told not to touch it
    /// once set). The box itself is immutable; it compares and hashes by the stream's identity.
    private final class BodyStreamBox: Hashable, @unchecked Sendable {
        let stream: InputStream

        init(_ stream: InputStream) {
            self.stream = stream
        }

        static func == (lhs: BodyStreamBox, rhs: BodyStreamBox) -> Bool {
            lhs.stream === rhs.stream
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(ObjectIdentifier(stream))
        }
    }

    /// The rarely changed part of a request, shared between copies until one of them mutates it.
    ///
    /// `@unchecked Sendable`: an instance is only mutated through `mutateStorage`, which first
    /// makes sure it is uniquely referenced, so a storage object reachable from more than one
    /// value (or thread) is never written to. The protocol property values are `Any`, as in
    /// Apple's API; like Apple, Courier only hands them back to the caller.
    private final class Storage: @unchecked Sendable {
        /// The storage of every request created with the default policies.
        static let shared = Storage()

        var cachePolicy: URLRequest.CachePolicy = .useProtocolCachePolicy
        var timeoutInterval: TimeInterval = 60.0
        var mainDocumentURL: URL?
        var networkServiceType: URLRequest.NetworkServiceType = .default
        var allowsCellularAccess = true
        var httpShouldHandleCookies = true
        var httpShouldUsePipelining = false
        var properties: [String: Any] = [:]

        func copy() -> Storage {
            let copy = Storage()
            copy.cachePolicy = cachePolicy
            copy.timeoutInterval = timeoutInterval
            copy.mainDocumentURL = mainDocumentURL
            copy.networkServiceType = networkServiceType
            copy.allowsCellularAccess = allowsCellularAccess
            copy.httpShouldHandleCookies = httpShouldHandleCookies
            copy.httpShouldUsePipelining = httpShouldUsePipelining
            copy.properties = properties
            return copy
        }

        func policiesEqual(_ other: Storage) -> Bool {
            cachePolicy == other.cachePolicy
                && timeoutInterval == other.timeoutInterval
                && mainDocumentURL == other.mainDocumentURL
                && networkServiceType == other.networkServiceType
                && allowsCellularAccess == other.allowsCellularAccess
                && httpShouldHandleCookies == other.httpShouldHandleCookies
                && httpShouldUsePipelining == other.httpShouldUsePipelining
        }

        func hashPolicies(into hasher: inout Hasher) {
            hasher.combine(cachePolicy)
            hasher.combine(timeoutInterval)
            hasher.combine(mainDocumentURL)
            hasher.combine(networkServiceType)
            hasher.combine(allowsCellularAccess)
            hasher.combine(httpShouldHandleCookies)
            hasher.combine(httpShouldUsePipelining)
        }
    }
}

extension URLRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {

    /// The request's absolute URL string, or `"url: nil"` when it has no URL.
    public var description: String {
        url?.description ?? "url: nil"
    }

    /// Same as `description`: the request's URL.
    public var debugDescription: String {
        description
    }

    /// A mirror listing the request's public properties, for `dump` and debuggers.
    public var customMirror: Mirror {
        let children: [(label: String?, value: Any)] = [
            ("url", url as Any),
            ("cachePolicy", cachePolicy.rawValue),
            ("timeoutInterval", timeoutInterval),
            ("mainDocumentURL", mainDocumentURL as Any),
            ("networkServiceType", networkServiceType),
            ("allowsCellularAccess", allowsCellularAccess),
            ("httpMethod", httpMethod as Any),
            ("allHTTPHeaderFields", allHTTPHeaderFields as Any),
            ("httpBody", httpBody as Any),
            ("httpBodyStream", httpBodyStream as Any),
            ("httpShouldHandleCookies", httpShouldHandleCookies),
            ("httpShouldUsePipelining", _shouldUsePipelining),
        ]
        return Mirror(self, children: children, displayStyle: .struct)
    }
}
