import Foundation

/// The base class of every protocol handler: subclass it to load URLs of a scheme of your own.
///
/// Courier drives every request — built-in handlers, classes an app registers, and plugins — through
/// this class and ``URLProtocolClient``, so all of them share one task and delegate model. A subclass
/// overrides ``canInit(with:)-(URLRequest)`` to claim requests, then ``startLoading()`` to begin
/// and ``stopLoading()`` to stop, reporting progress to ``client``.
///
/// Courier calls `startLoading()` and `stopLoading()` for one instance on one serial queue, never at
/// the same time. The client may be called from any thread.
open class URLProtocol: NSObject {
    private let originalRequest: URLRequest
    private let storedCachedResponse: CachedURLResponse?

    /// Creates a protocol instance to load `request`, reporting to `client`.
    public required init(request: URLRequest, cachedResponse: CachedURLResponse?, client: (any URLProtocolClient)?) {
        self.originalRequest = request
        self.storedCachedResponse = cachedResponse
        self.client = client
        super.init()
    }

    /// Creates a protocol instance for a task, loading the task's current request.
    public required convenience init(task: URLSessionTask, cachedResponse: CachedURLResponse?, client: (any URLProtocolClient)?) {
        let request = task.currentRequest ?? task.originalRequest ?? URLRequest.placeholder
        self.init(request: request, cachedResponse: cachedResponse, client: client)
        self.task = task
    }

    /// The object the protocol reports responses, data, redirects, challenges and completion to.
    open var client: (any URLProtocolClient)?

    /// The request this instance loads.
    open var request: URLRequest { originalRequest }

    /// A cached response the loading system found for the request, if any.
    open var cachedResponse: CachedURLResponse? { storedCachedResponse }

    /// The task this instance loads for, when it was created for a task.
    open var task: URLSessionTask?

    /// Whether this class can load `request`. The base class claims nothing.
    open class func canInit(with request: URLRequest) -> Bool { false }

    /// Whether this class can load the task's current request.
    open class func canInit(with task: URLSessionTask) -> Bool {
        guard let request = task.currentRequest ?? task.originalRequest else { return false }
        return canInit(with: request)
    }

    /// The canonical form of `request`, used as the cache key. The base class returns it unchanged.
    open class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    /// Whether two requests are equivalent for caching: equal canonical requests.
    open class func requestIsCacheEquivalent(_ a: URLRequest, to b: URLRequest) -> Bool {
        canonicalRequest(for: a) == canonicalRequest(for: b)
    }

    /// Starts loading the request. Subclasses must override it; the base class fails the load with
    /// `URLError.unsupportedURL`.
    open func startLoading() {
        let url = request.url
        client?.urlProtocol(self, didFailWithError: URLError(.unsupportedURL, url: url,
            description: "\(type(of: self)) does not implement startLoading()"))
    }

    /// Stops loading. After it returns the protocol should call its client no more.
    open func stopLoading() {}

    /// The property stored under `key` in `request` by ``setProperty(_:forKey:in:)``.
    open class func property(forKey key: String, in request: URLRequest) -> Any? {
        request.protocolProperty(forKey: key)
    }

    /// Stores a property in a mutable request, for protocol classes to tag requests they handle.
    open class func setProperty(_ value: Any, forKey key: String, in request: NSMutableURLRequest) {
        var swiftRequest = request._request
        swiftRequest.setProtocolProperty(value, forKey: key)
        request._request = swiftRequest
    }

    /// Removes the property stored under `key` from a mutable request.
    open class func removeProperty(forKey key: String, in request: NSMutableURLRequest) {
        var swiftRequest = request._request
        swiftRequest.removeProtocolProperty(forKey: key)
        request._request = swiftRequest
    }

    /// Registers a `URLProtocol` subclass for every session that has no `protocolClasses` claiming
    /// a request first. Classes registered later are asked first. Returns `false` for a class that is
    /// not a `URLProtocol` subclass.
    @discardableResult
    open class func registerClass(_ protocolClass: AnyClass) -> Bool {
        guard let type = protocolClass as? URLProtocol.Type else { return false }
        ProtocolRegistry.shared.register(type)
        return true
    }

    /// Removes a class registered with ``registerClass(_:)``.
    open class func unregisterClass(_ protocolClass: AnyClass) {
        guard let type = protocolClass as? URLProtocol.Type else { return }
        ProtocolRegistry.shared.unregister(type)
    }
}

extension URLRequest {
    /// A request for a URL no caller can mean, used only when a task has no request at all.
    static var placeholder: URLRequest {
        URLRequest(url: URL(fileURLWithPath: "/"))
    }
}
