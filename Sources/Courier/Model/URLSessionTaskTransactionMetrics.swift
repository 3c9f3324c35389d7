import Foundation

/// Timing and size statistics for one request/response exchange of a task.
///
/// The task engine records one per exchange (the first request, each redirect, each
/// authentication retry) and collects them in `URLSessionTaskMetrics.transactionMetrics`. Dates
/// that do not apply (no DNS lookup on a reused connection, no TLS on `http`) stay `nil`.
open class URLSessionTaskTransactionMetrics: NSObject, @unchecked Sendable {

    /// Everything the task engine records about an exchange, besides the request; guarded by
    /// `state`. All values start empty, so the engine can fill them in as the exchange proceeds.
    struct Values: Sendable {
        var response: URLResponse? = nil
        var fetchStartDate: Date? = nil
        var domainLookupStartDate: Date? = nil
        var domainLookupEndDate: Date? = nil
        var connectStartDate: Date? = nil
        var secureConnectionStartDate: Date? = nil
        var secureConnectionEndDate: Date? = nil
        var connectEndDate: Date? = nil
        var requestStartDate: Date? = nil
        var requestEndDate: Date? = nil
        var responseStartDate: Date? = nil
        var responseEndDate: Date? = nil
        var countOfRequestBodyBytesBeforeEncoding: Int64 = 0
        var countOfRequestBodyBytesSent: Int64 = 0
        var countOfRequestHeaderBytesSent: Int64 = 0
        var countOfResponseBodyBytesAfterDecoding: Int64 = 0
        var countOfResponseBodyBytesReceived: Int64 = 0
        var countOfResponseHeaderBytesReceived: Int64 = 0
        var networkProtocolName: String? = nil
        var remoteAddress: String? = nil
        var remotePort: String? = nil
        var localAddress: String? = nil
        var localPort: String? = nil
        var negotiatedTLSCipherSuite: tls_ciphersuite_t? = nil
        var negotiatedTLSProtocolVersion: tls_protocol_version_t? = nil
        var isCellular: Bool = false
        var isExpensive: Bool = false
        var isConstrained: Bool = false
        var isProxyConnection: Bool = false
        var isReusedConnection: Bool = false
        var isMultipath: Bool = false
        var resourceFetchType: URLSessionTaskMetrics.ResourceFetchType = .unknown
        var domainResolutionProtocol: URLSessionTaskMetrics.DomainResolutionProtocol = .unknown
    }

    private let state: Locked<Values>

    /// The request of this exchange, as sent.
    public let request: URLRequest

    /// Creates transaction metrics from a request and recorded values (used by the task engine).
    ///
    /// - Parameters:
    ///   - request: The request of the exchange.
    ///   - values: The recorded values.
    init(request: URLRequest, values: Values) {
        self.request = request
        state = Locked(values)
        super.init()
    }

    /// Creates transaction metrics from a request and any recorded values (used by the task
    /// engine); every value left out starts empty (`nil`, `0`, `false` or `.unknown`).
    init(request: URLRequest,
         response: URLResponse? = nil,
         fetchStartDate: Date? = nil,
         domainLookupStartDate: Date? = nil,
         domainLookupEndDate: Date? = nil,
         connectStartDate: Date? = nil,
         secureConnectionStartDate: Date? = nil,
         secureConnectionEndDate: Date? = nil,
         connectEndDate: Date? = nil,
         requestStartDate: Date? = nil,
         requestEndDate: Date? = nil,
         responseStartDate: Date? = nil,
         responseEndDate: Date? = nil,
         countOfRequestBodyBytesBeforeEncoding: Int64 = 0,
         countOfRequestBodyBytesSent: Int64 = 0,
         countOfRequestHeaderBytesSent: Int64 = 0,
         countOfResponseBodyBytesAfterDecoding: Int64 = 0,
         countOfResponseBodyBytesReceived: Int64 = 0,
         countOfResponseHeaderBytesReceived: Int64 = 0,
         networkProtocolName: String? = nil,
         remoteAddress: String? = nil,
         remotePort: String? = nil,
         localAddress: String? = nil,
         localPort: String? = nil,
         negotiatedTLSCipherSuite: tls_ciphersuite_t? = nil,
         negotiatedTLSProtocolVersion: tls_protocol_version_t? = nil,
         isCellular: Bool = false,
         isExpensive: Bool = false,
         isConstrained: Bool = false,
         isProxyConnection: Bool = false,
         isReusedConnection: Bool = false,
         isMultipath: Bool = false,
         resourceFetchType: URLSessionTaskMetrics.ResourceFetchType = .unknown,
         domainResolutionProtocol: URLSessionTaskMetrics.DomainResolutionProtocol = .unknown) {
        self.request = request
        var values = Values()
        values.response = response
        values.fetchStartDate = fetchStartDate
        values.domainLookupStartDate = domainLookupStartDate
        values.domainLookupEndDate = domainLookupEndDate
        values.connectStartDate = connectStartDate
        values.secureConnectionStartDate = secureConnectionStartDate
        values.secureConnectionEndDate = secureConnectionEndDate
        values.connectEndDate = connectEndDate
        values.requestStartDate = requestStartDate
        values.requestEndDate = requestEndDate
        values.responseStartDate = responseStartDate
        values.responseEndDate = responseEndDate
        values.countOfRequestBodyBytesBeforeEncoding = countOfRequestBodyBytesBeforeEncoding
        values.countOfRequestBodyBytesSent = countOfRequestBodyBytesSent
        values.countOfRequestHeaderBytesSent = countOfRequestHeaderBytesSent
        values.countOfResponseBodyBytesAfterDecoding = countOfResponseBodyBytesAfterDecoding
        values.countOfResponseBodyBytesReceived = countOfResponseBodyBytesReceived
        values.countOfResponseHeaderBytesReceived = countOfResponseHeaderBytesReceived
        values.networkProtocolName = networkProtocolName
        values.remoteAddress = remoteAddress
        values.remotePort = remotePort
        values.localAddress = localAddress
        values.localPort = localPort
        values.negotiatedTLSCipherSuite = negotiatedTLSCipherSuite
        values.negotiatedTLSProtocolVersion = negotiatedTLSProtocolVersion
        values.isCellular = isCellular
        values.isExpensive = isExpensive
        values.isConstrained = isConstrained
        values.isProxyConnection = isProxyConnection
        values.isReusedConnection = isReusedConnection
        values.isMultipath = isMultipath
        values.resourceFetchType = resourceFetchType
        values.domainResolutionProtocol = domainResolutionProtocol
        state = Locked(values)
        super.init()
    }

    /// A snapshot of every recorded value, taken under one lock.
    var values: Values {
        state.withLock { $0 }
    }

    /// Applies several changes at once, under one lock (used by the task engine).
    func update(_ body: (inout Values) -> Void) {
        state.withLock { body(&$0) }
    }

    /// The response received in this exchange, or `nil` when none arrived.
    public internal(set) var response: URLResponse? {
        get { state.withLock { $0.response } }
        set { state.withLock { $0.response = newValue } }
    }

    /// When the task began to fetch the resource (from the network or a cache).
    public internal(set) var fetchStartDate: Date? {
        get { state.withLock { $0.fetchStartDate } }
        set { state.withLock { $0.fetchStartDate = newValue } }
    }

    /// When host name resolution began; `nil` for a reused connection or a cached response.
    public internal(set) var domainLookupStartDate: Date? {
        get { state.withLock { $0.domainLookupStartDate } }
        set { state.withLock { $0.domainLookupStartDate = newValue } }
    }

    /// When host name resolution finished.
    public internal(set) var domainLookupEndDate: Date? {
        get { state.withLock { $0.domainLookupEndDate } }
        set { state.withLock { $0.domainLookupEndDate = newValue } }
    }

    /// When the transport connection began to be set up; `nil` for a reused connection.
    public internal(set) var connectStartDate: Date? {
        get { state.withLock { $0.connectStartDate } }
        set { state.withLock { $0.connectStartDate = newValue } }
    }

    /// When the TLS handshake began; `nil` without TLS.
    public internal(set) var secureConnectionStartDate: Date? {
        get { state.withLock { $0.secureConnectionStartDate } }
        set { state.withLock { $0.secureConnectionStartDate = newValue } }
    }

    /// When the TLS handshake finished.
    public internal(set) var secureConnectionEndDate: Date? {
        get { state.withLock { $0.secureConnectionEndDate } }
        set { state.withLock { $0.secureConnectionEndDate = newValue } }
    }

    /// When the connection was ready, TLS included.
    public internal(set) var connectEndDate: Date? {
        get { state.withLock { $0.connectEndDate } }
        set { state.withLock { $0.connectEndDate = newValue } }
    }

    /// When the first byte of the request was written.
    public internal(set) var requestStartDate: Date? {
        get { state.withLock { $0.requestStartDate } }
        set { state.withLock { $0.requestStartDate = newValue } }
    }

    /// When the last byte of the request was written.
    public internal(set) var requestEndDate: Date? {
        get { state.withLock { $0.requestEndDate } }
        set { state.withLock { $0.requestEndDate = newValue } }
    }

    /// When the first byte of the response arrived.
    public internal(set) var responseStartDate: Date? {
        get { state.withLock { $0.responseStartDate } }
        set { state.withLock { $0.responseStartDate = newValue } }
    }

    /// When the last byte of the response arrived.
    public internal(set) var responseEndDate: Date? {
        get { state.withLock { $0.responseEndDate } }
        set { state.withLock { $0.responseEndDate = newValue } }
    }

    /// The size of the request body before any content encoding.
    public internal(set) var countOfRequestBodyBytesBeforeEncoding: Int64 {
        get { state.withLock { $0.countOfRequestBodyBytesBeforeEncoding } }
        set { state.withLock { $0.countOfRequestBodyBytesBeforeEncoding = newValue } }
    }

    /// How many request body bytes were sent, after encoding.
    public internal(set) var countOfRequestBodyBytesSent: Int64 {
        get { state.withLock { $0.countOfRequestBodyBytesSent } }
        set { state.withLock { $0.countOfRequestBodyBytesSent = newValue } }
    }

    /// How many bytes of request line and header fields were sent.
    public internal(set) var countOfRequestHeaderBytesSent: Int64 {
        get { state.withLock { $0.countOfRequestHeaderBytesSent } }
        set { state.withLock { $0.countOfRequestHeaderBytesSent = newValue } }
    }

    /// The size of the response body after content decoding.
    public internal(set) var countOfResponseBodyBytesAfterDecoding: Int64 {
        get { state.withLock { $0.countOfResponseBodyBytesAfterDecoding } }
        set { state.withLock { $0.countOfResponseBodyBytesAfterDecoding = newValue } }
    }

    /// How many response body bytes were received, before decoding.
    public internal(set) var countOfResponseBodyBytesReceived: Int64 {
        get { state.withLock { $0.countOfResponseBodyBytesReceived } }
        set { state.withLock { $0.countOfResponseBodyBytesReceived = newValue } }
    }

    /// How many bytes of status line and header fields were received.
    public internal(set) var countOfResponseHeaderBytesReceived: Int64 {
        get { state.withLock { $0.countOfResponseHeaderBytesReceived } }
        set { state.withLock { $0.countOfResponseHeaderBytesReceived = newValue } }
    }

    /// The ALPN name of the protocol used, such as `"http/1.1"` or `"h2"`.
    public internal(set) var networkProtocolName: String? {
        get { state.withLock { $0.networkProtocolName } }
        set { state.withLock { $0.networkProtocolName = newValue } }
    }

    /// The IP address of the remote end of the connection.
    public internal(set) var remoteAddress: String? {
        get { state.withLock { $0.remoteAddress } }
        set { state.withLock { $0.remoteAddress = newValue } }
    }

    /// The port of the remote end of the connection.
    public internal(set) var remotePort: String? {
        get { state.withLock { $0.remotePort } }
        set { state.withLock { $0.remotePort = newValue } }
    }

    /// The IP address of the local end of the connection.
    public internal(set) var localAddress: String? {
        get { state.withLock { $0.localAddress } }
        set { state.withLock { $0.localAddress = newValue } }
    }

    /// The port of the local end of the connection.
    public internal(set) var localPort: String? {
        get { state.withLock { $0.localPort } }
        set { state.withLock { $0.localPort = newValue } }
    }

    /// The TLS cipher suite negotiated, or `nil` without TLS.
    public internal(set) var negotiatedTLSCipherSuite: tls_ciphersuite_t? {
        get { state.withLock { $0.negotiatedTLSCipherSuite } }
        set { state.withLock { $0.negotiatedTLSCipherSuite = newValue } }
    }

    /// The TLS protocol version negotiated, or `nil` without TLS.
    public internal(set) var negotiatedTLSProtocolVersion: tls_protocol_version_t? {
        get { state.withLock { $0.negotiatedTLSProtocolVersion } }
        set { state.withLock { $0.negotiatedTLSProtocolVersion = newValue } }
    }

    /// Whether the connection used a cellular interface; always `false` on Linux.
    public internal(set) var isCellular: Bool {
        get { state.withLock { $0.isCellular } }
        set { state.withLock { $0.isCellular = newValue } }
    }

    /// Whether the connection used an interface considered expensive.
    public internal(set) var isExpensive: Bool {
        get { state.withLock { $0.isExpensive } }
        set { state.withLock { $0.isExpensive = newValue } }
    }

    /// Whether the connection used an interface in low-data mode.
    public internal(set) var isConstrained: Bool {
        get { state.withLock { $0.isConstrained } }
        set { state.withLock { $0.isConstrained = newValue } }
    }

    /// Whether the exchange went through a proxy.
    public internal(set) var isProxyConnection: Bool {
        get { state.withLock { $0.isProxyConnection } }
        set { state.withLock { $0.isProxyConnection = newValue } }
    }

    /// Whether an already open connection was reused.
    public internal(set) var isReusedConnection: Bool {
        get { state.withLock { $0.isReusedConnection } }
        set { state.withLock { $0.isReusedConnection = newValue } }
    }

    /// Whether the connection used Multipath TCP.
    public internal(set) var isMultipath: Bool {
        get { state.withLock { $0.isMultipath } }
        set { state.withLock { $0.isMultipath = newValue } }
    }

    /// Where the resource came from: the network or the cache.
    public internal(set) var resourceFetchType: URLSessionTaskMetrics.ResourceFetchType {
        get { state.withLock { $0.resourceFetchType } }
        set { state.withLock { $0.resourceFetchType = newValue } }
    }

    /// The protocol used to resolve the host name.
    public internal(set) var domainResolutionProtocol: URLSessionTaskMetrics.DomainResolutionProtocol {
        get { state.withLock { $0.domainResolutionProtocol } }
        set { state.withLock { $0.domainResolutionProtocol = newValue } }
    }
}
