import Foundation

/// One HTTP cookie: an immutable name/value pair with the attributes that decide where it is sent.
///
/// Cookies are made from a property dictionary (`init(properties:)`) or parsed from a response's
/// `Set-Cookie` header fields (`cookies(withResponseHeaderFields:for:)`), and are stored in an
/// `HTTPCookieStorage`. A cookie whose `domain` starts with a dot is sent to that domain and all
/// of its sub-domains; any other cookie is sent only to the exact host named by `domain`.
open class HTTPCookie: NSObject, @unchecked Sendable {
    // Every stored property is a `let`: the object is immutable after `init`, which is what
    // makes the `@unchecked Sendable` promise hold.
    private let _version: Int
    private let _name: String
    private let _value: String
    private let _expiresDate: Date?
    private let _sessionOnly: Bool
    private let _domain: String
    private let _path: String
    private let _secure: Bool
    private let _httpOnly: Bool
    private let _comment: String?
    private let _commentURL: URL?
    private let _portList: [NSNumber]?
    private let _created: Date
    /// The SameSite policy (`"strict"`, `"lax"`, `"none"`), or `nil` when none was given.
    let sameSitePolicy: String?

    /// Creates a cookie from a dictionary of attributes, or returns `nil` when it is incomplete.
    ///
    /// The rules Courier applies:
    /// - `.name`, `.value` and `.path` are required strings.
    /// - `.domain` gives the domain; without it the host of `.originURL` (a `URL` or `String`) is
    ///   used; with neither the initialiser fails. Domains are lower-cased.
    /// - `.maximumAge` (seconds, as a `String` or number) wins over `.expires`, which may be a
    ///   `Date` or a `String` in any HTTP date format (RFC 1123, RFC 850, asctime).
    /// - `.discard` (`"TRUE"`/`"FALSE"`) decides `isSessionOnly`; when absent, a version 1 cookie
    ///   without `.maximumAge` is session-only (Apple's documented default), and a version 0
    ///   cookie is session-only when it has no expiry date.
    /// - `.secure` is true for `"TRUE"` (or any string other than `"FALSE"`, `"NO"`, `"0"` or
    ///   empty) and for a `true` Boolean.
    /// - `.version` is `"0"` or `"1"`; `.port` is a comma-separated list of port numbers (a
    ///   version 0 cookie keeps only the first); `.comment` and `.commentURL` are optional.
    ///
    /// Keys Courier does not know are ignored.
    ///
    /// - Parameter properties: The cookie's attributes.
    public init?(properties: [HTTPCookiePropertyKey: Any]) {
        guard let name = Self.string(properties[.name]),
              let value = Self.string(properties[.value]),
              let path = Self.string(properties[.path])
        else { return nil }

        let domain: String
        if let given = Self.string(properties[.domain]), !given.isEmpty {
            domain = given.lowercased()
        } else if let origin = Self.url(properties[.originURL]), let host = origin.host, !host.isEmpty {
            domain = host.lowercased()
        } else {
            return nil
        }

        let version = Self.integer(properties[.version]) == 1 ? 1 : 0

        var ports: [NSNumber]?
        if let portValue = properties[.port] {
            let numbers: [Int]
            if let list = portValue as? [NSNumber] {
                numbers = list.map(\.intValue)
            } else if let list = portValue as? [Int] {
                numbers = list
            } else if let single = Self.string(portValue) {
                numbers = single.split(separator: ",").compactMap {
                    Int($0.trimmingCharacters(in: .whitespaces))
                }
            } else if let number = Self.integer(portValue) {
                numbers = [number]
            } else {
                numbers = []
            }
            let list = (version == 0 ? Array(numbers.prefix(1)) : numbers).map { NSNumber(value: $0) }
            ports = list.isEmpty ? nil : list
        }

        var expires: Date?
        if let maxAge = Self.integer(properties[.maximumAge]) {
            expires = Date(timeIntervalSinceNow: TimeInterval(maxAge))
        } else if let date = properties[.expires] as? Date {
            expires = date
        } else if let text = Self.string(properties[.expires]) {
            expires = SetCookieParser.parseDate(text)
        }

        // Apple's rule for `.discard`: when absent, a version 1 cookie is session-only unless it
        // has a maximum age; Courier makes a version 0 cookie session-only when it has no expiry.
        let sessionOnly: Bool
        if let discard = properties[.discard] {
            sessionOnly = Self.flag(discard)
        } else if version >= 1 {
            sessionOnly = Self.integer(properties[.maximumAge]) == nil
        } else {
            sessionOnly = expires == nil
        }

        var commentURL: URL?
        if let url = Self.url(properties[.commentURL]) { commentURL = url }

        var sameSite: String?
        if let policy = Self.string(properties[.sameSitePolicy])?.lowercased(),
           ["strict", "lax", "none"].contains(policy) {
            sameSite = policy
        }

        var created = Date()
        if let reference = properties[.created] as? Double {
            created = Date(timeIntervalSinceReferenceDate: reference)
        } else if let date = properties[.created] as? Date {
            created = date
        }

        _version = version
        _name = name
        _value = value
        _expiresDate = expires
        _sessionOnly = sessionOnly
        _domain = domain
        _path = path
        _secure = properties[.secure].map(Self.flag) ?? false
        _httpOnly = properties[.httpOnly].map(Self.flag) ?? false
        _comment = Self.string(properties[.comment])
        _commentURL = commentURL
        _portList = ports
        _created = created
        sameSitePolicy = sameSite
        super.init()
    }

    /// Builds the request header that sends `cookies` to a server.
    ///
    /// - Parameter cookies: The cookies to send, in the order they should appear.
    /// - Returns: `["Cookie": "a=b; c=d"]`, or an empty dictionary when `cookies` is empty.
    open class func requestHeaderFields(with cookies: [HTTPCookie]) -> [String: String] {
        guard !cookies.isEmpty else { return [:] }
        let header = cookies.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
        return ["Cookie": header]
    }

    /// Parses the cookies set by a response.
    ///
    /// Every `Set-Cookie` field (any letter case) is read; several cookies folded into one value
    /// with commas are split apart (a comma starts a new cookie only where a valid `name=`
    /// follows). Other fields are ignored. Each cookie follows RFC 6265: the `Domain` attribute
    /// must domain-match the URL's host (otherwise the cookie is dropped) and makes the cookie
    /// apply to sub-domains; without `Path` the URL's directory is used; `Max-Age` wins over
    /// `Expires`, and a zero or negative `Max-Age` expires the cookie at once; a cookie with
    /// neither, or with `Discard`, is session-only. The RFC 2965 attributes `Version`, `Comment`,
    /// `CommentURL` and `Port` are kept in the cookie.
    ///
    /// - Parameters:
    ///   - headerFields: The response's header fields.
    ///   - URL: The URL that was loaded; it supplies the default domain and path.
    /// - Returns: The accepted cookies.
    open class func cookies(withResponseHeaderFields headerFields: [String: String], for URL: URL) -> [HTTPCookie] {
        SetCookieParser.cookies(fromHeaderFields: headerFields, for: URL)
    }

    /// The cookie as a property dictionary that `init(properties:)` turns back into an
    /// equivalent cookie.
    open var properties: [HTTPCookiePropertyKey: Any]? {
        var result: [HTTPCookiePropertyKey: Any] = [
            .name: _name,
            .value: _value,
            .domain: _domain,
            .path: _path,
            .version: String(_version),
            .created: _created.timeIntervalSinceReferenceDate,
        ]
        if let expires = _expiresDate { result[.expires] = expires }
        result[.discard] = _sessionOnly ? "TRUE" : "FALSE"
        if _secure { result[.secure] = "TRUE" }
        if _httpOnly { result[.httpOnly] = "TRUE" }
        if let comment = _comment { result[.comment] = comment }
        if let commentURL = _commentURL { result[.commentURL] = commentURL }
        if let ports = _portList { result[.port] = ports.map { $0.stringValue }.joined(separator: ",") }
        if let sameSite = sameSitePolicy { result[.sameSitePolicy] = sameSite }
        return result
    }

    /// The cookie's version: 0 for Netscape-style cookies, 1 for RFC 2965 cookies.
    open var version: Int { _version }

    /// The cookie's name.
    open var name: String { _name }

    /// The cookie's value.
    open var value: String { _value }

    /// When the cookie expires, or `nil` for a cookie that lives until the session ends.
    open var expiresDate: Date? { _expiresDate }

    /// Whether the cookie is thrown away at the end of the session, whatever its expiry date.
    open var isSessionOnly: Bool { _sessionOnly }

    /// The domain the cookie is sent to; a leading dot includes every sub-domain.
    open var domain: String { _domain }

    /// The URL path the cookie is sent for, together with everything below it.
    open var path: String { _path }

    /// Whether the cookie is only sent over secure (`https`) connections.
    open var isSecure: Bool { _secure }

    /// Whether the cookie was marked `HttpOnly`: it is for HTTP requests only, never for scripts.
    open var isHTTPOnly: Bool { _httpOnly }

    /// A human-readable comment about the cookie, if one was given.
    open var comment: String? { _comment }

    /// A URL that explains the cookie, if one was given.
    open var commentURL: URL? { _commentURL }

    /// The only ports the cookie may be sent to, or `nil` when any port is fine.
    open var portList: [NSNumber]? { _portList }

    /// A readable summary of the cookie's attributes.
    override open var description: String {
        var text = "<\(type(of: self)) version:\(_version) name:\"\(_name)\" value:\"\(_value)\""
        text += " expiresDate:" + (_expiresDate.map { "'\($0)'" } ?? "'(null)'")
        text += " sessionOnly:\(_sessionOnly ? "TRUE" : "FALSE")"
        text += " domain:\"\(_domain)\" path:\"\(_path)\""
        text += " isSecure:\(_secure ? "TRUE" : "FALSE") isHTTPOnly:\(_httpOnly ? "TRUE" : "FALSE")"
        text += " sameSite:\"\(sameSitePolicy ?? "none")\""
        if let comment = _comment { text += " comment:\"\(comment)\"" }
        if let commentURL = _commentURL { text += " commentURL:\"\(commentURL.absoluteString)\"" }
        if let ports = _portList { text += " ports:{ \(ports.map { $0.stringValue }.joined(separator: ", ")) }" }
        return text + ">"
    }

    // MARK: - Matching (used by HTTPCookieStorage)

    /// When the cookie object was created.
    var creationDate: Date { _created }

    /// Whether the cookie has expired at `date`.
    func isExpired(at date: Date = Date()) -> Bool {
        guard let expires = _expiresDate else { return false }
        return expires <= date
    }

    /// Whether the cookie's domain covers `host` (lower-case): an exact match for a host-only
    /// cookie, a domain-match (RFC 6265 5.1.3) for a cookie whose domain starts with a dot.
    func matches(host: String) -> Bool {
        guard _domain.hasPrefix(".") else { return host == _domain }
        return SetCookieParser.domainMatches(host: host, domain: String(_domain.dropFirst()))
    }

    /// Whether the cookie should be sent with a request for `url`: domain, path, `Secure` and
    /// port list all agree, and the cookie has not expired.
    func shouldBeSent(to url: URL, at date: Date = Date()) -> Bool {
        guard let host = url.host?.lowercased(), matches(host: host) else { return false }
        guard SetCookieParser.pathMatches(requestPath: SetCookieParser.requestPath(of: url), cookiePath: _path) else {
            return false
        }
        let scheme = url.scheme?.lowercased() ?? ""
        if _secure, scheme != "https", scheme != "wss" { return false }
        if let ports = _portList, !ports.isEmpty {
            let port = url.port ?? Self.defaultPort(forScheme: scheme)
            guard let port, ports.contains(where: { $0.intValue == port }) else { return false }
        }
        return !isExpired(at: date)
    }

    private static func defaultPort(forScheme scheme: String) -> Int? {
        switch scheme {
        case "http", "ws": return 80
        case "https", "wss": return 443
        default: return nil
        }
    }

    // MARK: - Property value coercion

    private static func string(_ value: Any?) -> String? {
        switch value {
        case let string as String: return string
        case let substring as Substring: return String(substring)
        case let string as NSString: return String(describing: string)
        default: return nil
        }
    }

    private static func integer(_ value: Any?) -> Int? {
        switch value {
        case let int as Int: return int
        case let number as NSNumber: return number.intValue
        case let double as Double: return Int(exactly: double.rounded())
        default:
            guard let text = string(value) else { return nil }
            return Int(text.trimmingCharacters(in: .whitespaces))
        }
    }

    private static func url(_ value: Any?) -> URL? {
        if let url = value as? URL { return url }
        if let text = string(value) { return URL(string: text) }
        return nil
    }

    private static func flag(_ value: Any) -> Bool {
        switch value {
        case let bool as Bool: return bool
        case let number as NSNumber: return number.boolValue
        default:
            guard let text = string(value)?.trimmingCharacters(in: .whitespaces) else { return false }
            return !["", "false", "no", "0"].contains(text.lowercased())
        }
    }
}

extension HTTPCookie {

    /// Which cookies an `HTTPCookieStorage` accepts.
    public enum AcceptPolicy: UInt, Sendable {

        /// Accept every cookie.
        case always

        /// Accept no cookie.
        case never

        /// Accept only cookies set by URLs in the main document's domain.
        case onlyFromMainDocumentDomain
    }
}
