import Foundation

/// A mutable URL load request: an `NSURLRequest` whose properties can be changed in place.
///
/// Useful when one object is adjusted across several loads, and required by
/// `URLProtocol.setProperty(_:forKey:in:)`. The loading system copies the request when a task is
/// created, so later mutations never affect a load already started.
open class NSMutableURLRequest: NSURLRequest {

    /// Wraps `request`.
    internal override init(_ request: URLRequest) {
        super.init(request)
    }

    /// Decodes a request archived by `NSURLRequest.encode(with:)`.
    ///
    /// - Parameter aDecoder: The unarchiver to read from.
    public required init?(coder aDecoder: NSCoder) {
        super.init(coder: aDecoder)
    }

    /// Creates a mutable request for `url` with the default cache policy and a 60-second timeout.
    ///
    /// - Parameter url: The URL to load.
    public convenience init(url: URL) {
        self.init(url: url, cachePolicy: .useProtocolCachePolicy, timeoutInterval: 60.0)
    }

    /// Creates a mutable request for `url` with the given cache policy and timeout (seconds).
    ///
    /// - Parameters:
    ///   - url: The URL to load.
    ///   - cachePolicy: How the request interacts with the URL cache.
    ///   - timeoutInterval: The longest idle interval, in seconds, before the load times out.
    public override init(url: URL, cachePolicy: NSURLRequest.CachePolicy, timeoutInterval: TimeInterval) {
        super.init(url: url, cachePolicy: cachePolicy, timeoutInterval: timeoutInterval)
    }

    /// Returns a new, independent `NSMutableURLRequest` with the same contents (a mutable object
    /// cannot share itself as its copy).
    ///
    /// - Parameter zone: Ignored.
    open override func copy(with zone: NSZone? = nil) -> Any {
        NSMutableURLRequest(_request)
    }

    /// The URL to load.
    open override var url: URL? {
        get { _request.url }
        set { _request.url = newValue }
    }

    /// The URL of the main document this load belongs to, used by the cookie policy that only
    /// accepts cookies from the main document's domain.
    open override var mainDocumentURL: URL? {
        get { _request.mainDocumentURL }
        set { _request.mainDocumentURL = newValue }
    }

    /// The HTTP method; setting `nil` restores `"GET"`, and standard methods are upper-cased.
    open override var httpMethod: String? {
        get { _request.httpMethod }
        set { _request.httpMethod = newValue }
    }

    /// How the request interacts with the URL cache.
    open override var cachePolicy: NSURLRequest.CachePolicy {
        get { _request.cachePolicy }
        set { _request.cachePolicy = newValue }
    }

    /// The longest idle interval, in seconds, before the load fails with `URLError.timedOut`.
    open override var timeoutInterval: TimeInterval {
        get { _request.timeoutInterval }
        set { _request.timeoutInterval = newValue }
    }

    /// All header fields; assigning replaces every header, `nil` removes them all. Entries whose
    /// value holds a NUL or line break are left out, as ``setValue(_:forHTTPHeaderField:)`` drops them.
    open override var allHTTPHeaderFields: [String: String]? {
        get { _request.allHTTPHeaderFields }
        set { _request.allHTTPHeaderFields = newValue }
    }

    /// Sets the header `field` (case-insensitive) to `value`, replacing any previous value;
    /// `nil` removes the header. A value holding NUL, or CR or LF other than a folded line, is
    /// ignored, as FoundationNetworking does.
    ///
    /// - Parameters:
    ///   - value: The new value, or `nil` to remove the header.
    ///   - field: The header name (case-insensitive).
    open func setValue(_ value: String?, forHTTPHeaderField field: String) {
        _request.setValue(value, forHTTPHeaderField: field)
    }

    /// Appends `value` to the header `field` (case-insensitive), joining it to an existing value
    /// with a comma, or creates the header. A value that ``setValue(_:forHTTPHeaderField:)`` would
    /// ignore is ignored here too.
    ///
    /// - Parameters:
    ///   - value: The value to append.
    ///   - field: The header name (case-insensitive).
    open func addValue(_ value: String, forHTTPHeaderField field: String) {
        _request.addValue(value, forHTTPHeaderField: field)
    }

    /// The message body bytes; setting a non-nil value removes the body stream.
    open override var httpBody: Data? {
        get { _request.httpBody }
        set { _request.httpBody = newValue }
    }

    /// The stream the message body is read from; setting a non-nil stream removes `httpBody`.
    open override var httpBodyStream: InputStream? {
        get { _request.httpBodyStream }
        set { _request.httpBodyStream = newValue }
    }

    /// The kind of traffic the request carries.
    open override var networkServiceType: NSURLRequest.NetworkServiceType {
        get { _request.networkServiceType }
        set { _request.networkServiceType = newValue }
    }

    /// Whether the load may use a cellular interface (recorded only; no effect on Linux).
    open override var allowsCellularAccess: Bool {
        get { _request.allowsCellularAccess }
        set { _request.allowsCellularAccess = newValue }
    }

    /// Whether cookies are sent with the request and cookies it receives are stored.
    open override var httpShouldHandleCookies: Bool {
        get { _request.httpShouldHandleCookies }
        set { _request.httpShouldHandleCookies = newValue }
    }

    /// Whether the request may be pipelined behind an unanswered request (recorded only).
    @available(swift, deprecated: 6.1, message: "HTTP/1 pipelining has known compatibility issues, please adopt HTTP/2 and HTTP/3 instead")
    open override var httpShouldUsePipelining: Bool {
        get { _request._shouldUsePipelining }
        set { _request._shouldUsePipelining = newValue }
    }
}
