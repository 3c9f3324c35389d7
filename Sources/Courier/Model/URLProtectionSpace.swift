import Foundation

/// A server or proxy area that asks for authentication: host, port, protocol (or proxy type),
/// realm and authentication method.
///
/// Protection spaces are immutable and compare equal when those values match (the host without
/// regard to letter case, a `nil` authentication method counting as
/// `NSURLAuthenticationMethodDefault`), so they work as dictionary keys in `URLCredentialStorage`.
open class URLProtectionSpace: NSObject, NSCopying, @unchecked Sendable {
    // Immutable after `init`, which keeps the `@unchecked Sendable` promise.
    private let _host: String
    private let _port: Int
    private let _protocol: String?
    private let _proxyType: String?
    private let _realm: String?
    private let _authenticationMethod: String
    private let _isProxy: Bool
    private let _serverTrust: SecTrust?

    /// Returns the protection space itself; it is immutable.
    override open func copy() -> Any {
        copy(with: nil)
    }

    /// Returns the protection space itself; it is immutable.
    ///
    /// - Parameter zone: Ignored.
    open func copy(with zone: NSZone? = nil) -> Any {
        self
    }

    /// Creates the protection space of an origin server.
    ///
    /// - Parameters:
    ///   - host: The server's host name.
    ///   - port: The server's port.
    ///   - protocol: The protocol, such as `"http"`, `"https"` or `NSURLProtectionSpaceHTTPS`.
    ///   - realm: The realm named by the server's challenge, if any.
    ///   - authenticationMethod: One of the `NSURLAuthenticationMethod…` constants; `nil` means
    ///     `NSURLAuthenticationMethodDefault`.
    public init(host: String, port: Int, protocol: String?, realm: String?, authenticationMethod: String?) {
        _host = host
        _port = port
        _protocol = `protocol`
        _proxyType = nil
        _realm = realm
        _authenticationMethod = authenticationMethod ?? NSURLAuthenticationMethodDefault
        _isProxy = false
        _serverTrust = nil
        super.init()
    }

    /// The protection space of a server-trust challenge for `host`, carrying the chain it presented.
    init(host: String, port: Int, protocol: String?, serverTrust: SecTrust) {
        _host = host
        _port = port
        _protocol = `protocol`
        _proxyType = nil
        _realm = nil
        _authenticationMethod = NSURLAuthenticationMethodServerTrust
        _isProxy = false
        _serverTrust = serverTrust
        super.init()
    }

    /// For a server-trust challenge, the server's certificate chain and the verification failure.
    open var serverTrust: SecTrust? { _serverTrust }

    /// Creates the protection space of a proxy server.
    ///
    /// - Parameters:
    ///   - host: The proxy's host name.
    ///   - port: The proxy's port.
    ///   - type: The proxy type, such as `NSURLProtectionSpaceHTTPProxy`.
    ///   - realm: The realm named by the proxy's challenge, if any.
    ///   - authenticationMethod: One of the `NSURLAuthenticationMethod…` constants; `nil` means
    ///     `NSURLAuthenticationMethodDefault`.
    public init(proxyHost host: String, port: Int, type: String?, realm: String?, authenticationMethod: String?) {
        _host = host
        _port = port
        _protocol = nil
        _proxyType = type
        _realm = realm
        _authenticationMethod = authenticationMethod ?? NSURLAuthenticationMethodDefault
        _isProxy = true
        _serverTrust = nil
        super.init()
    }

    /// The realm of the challenge (for HTTP, the `realm` parameter), if any.
    open var realm: String? { _realm }

    /// Whether a credential for this space travels protected: the protocol (or proxy type) is
    /// HTTPS/FTPS/SFTP, or the authentication method never sends the password in clear text
    /// (Digest, NTLM, Negotiate, client certificate or server trust).
    open var receivesCredentialSecurely: Bool {
        switch _protocol?.lowercased() {
        case NSURLProtectionSpaceHTTPS, "ftps", "wss", "sftp":
            return true
        default:
            break
        }
        if _isProxy, _proxyType?.lowercased() == NSURLProtectionSpaceHTTPSProxy { return true }
        switch _authenticationMethod {
        case NSURLAuthenticationMethodHTTPDigest, NSURLAuthenticationMethodNTLM, NSURLAuthenticationMethodNegotiate,
             NSURLAuthenticationMethodClientCertificate, NSURLAuthenticationMethodServerTrust:
            return true
        default:
            return false
        }
    }

    /// The host of the server, or of the proxy for a proxy space.
    open var host: String { _host }

    /// The port of the server or proxy.
    open var port: Int { _port }

    /// The proxy type for a proxy space, `nil` for a server space.
    open var proxyType: String? { _proxyType }

    /// The protocol for a server space, `nil` for a proxy space.
    open var `protocol`: String? { _protocol }

    /// The authentication method, one of the `NSURLAuthenticationMethod…` constants.
    open var authenticationMethod: String { _authenticationMethod }

    /// Whether this is a proxy's protection space.
    override open func isProxy() -> Bool {
        _isProxy
    }

    /// Whether `object` is a protection space with the same host (any letter case), port,
    /// protocol, proxy type, realm and authentication method.
    ///
    /// - Parameter object: The object to compare with.
    override open func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? URLProtectionSpace else { return false }
        if other === self { return true }
        return other._host.lowercased() == _host.lowercased()
            && other._port == _port
            && other._protocol == _protocol
            && other._proxyType == _proxyType
            && other._realm == _realm
            && other._authenticationMethod == _authenticationMethod
            && other._isProxy == _isProxy
    }

    /// A hash consistent with `isEqual(_:)`.
    override open var hash: Int {
        var hasher = Hasher()
        hasher.combine(_host.lowercased())
        hasher.combine(_port)
        hasher.combine(_protocol)
        hasher.combine(_proxyType)
        hasher.combine(_realm)
        hasher.combine(_authenticationMethod)
        hasher.combine(_isProxy)
        return hasher.finalize()
    }

    /// A readable summary of the space's host, protocol, method, realm, port and proxy details.
    override open var description: String {
        var text = "<\(type(of: self)) \(Unmanaged.passUnretained(self).toOpaque())>: "
        text += "Host:\(_host), "
        text += "Server:\(_protocol ?? "(null)"), "
        text += "Auth-Scheme:\(_authenticationMethod), "
        text += "Realm:\(_realm ?? "(null)"), "
        text += "Port:\(_port), "
        text += "Proxy:\(_isProxy ? "YES" : "NO"), "
        text += "Proxy-Type:\(_proxyType ?? "(null)")"
        return text
    }
}

extension URLProtectionSpace {

    /// The certificate authorities acceptable for client-certificate authentication; Courier
    /// does not support client certificates yet, so this is always `nil`.
    @available(*, deprecated, message: "swift-corelibs-foundation does not currently support certificate authentication.")
    public var distinguishedNames: [Data]? { nil }
}
