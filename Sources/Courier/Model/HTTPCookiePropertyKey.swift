import Foundation

/// A key of the property dictionary that describes an `HTTPCookie`.
///
/// Pass a dictionary keyed by these values to `HTTPCookie(properties:)`, or read one back from
/// `HTTPCookie.properties`. The raw values are the strings Apple's Foundation uses, so
/// dictionaries built from raw strings keep working.
public struct HTTPCookiePropertyKey: RawRepresentable, Equatable, Hashable, Sendable {

    /// The string this key stands for, such as `"Name"` or `"Max-Age"`.
    public private(set) var rawValue: String

    /// Creates a key from its string form.
    ///
    /// - Parameter rawValue: The string used as the key, such as `"Domain"`.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    /// Creates a key from its string form; any string is accepted.
    ///
    /// - Parameter rawValue: The string used as the key, such as `"Path"`.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }
}

extension HTTPCookiePropertyKey {

    /// The cookie's name (a `String`). Required.
    public static let name = HTTPCookiePropertyKey(rawValue: "Name")

    /// The cookie's value (a `String`). Required.
    public static let value = HTTPCookiePropertyKey(rawValue: "Value")

    /// The URL that set the cookie (a `URL` or `String`); its host becomes the domain when no
    /// `domain` is given.
    public static let originURL = HTTPCookiePropertyKey(rawValue: "OriginURL")

    /// The cookie's version: `"0"` for Netscape-style cookies, `"1"` for RFC 2965 cookies.
    public static let version = HTTPCookiePropertyKey(rawValue: "Version")

    /// The domain the cookie belongs to (a `String`). A leading dot means sub-domains match too.
    public static let domain = HTTPCookiePropertyKey(rawValue: "Domain")

    /// The URL path the cookie applies to (a `String`). Required.
    public static let path = HTTPCookiePropertyKey(rawValue: "Path")

    /// Whether the cookie may only travel over secure connections (`"TRUE"` or `"FALSE"`).
    public static let secure = HTTPCookiePropertyKey(rawValue: "Secure")

    /// When the cookie expires (a `Date`, or a `String` holding an HTTP date).
    public static let expires = HTTPCookiePropertyKey(rawValue: "Expires")

    /// A human-readable comment about the cookie (a `String`).
    public static let comment = HTTPCookiePropertyKey(rawValue: "Comment")

    /// A URL explaining the cookie (a `URL` or `String`).
    public static let commentURL = HTTPCookiePropertyKey(rawValue: "CommentURL")

    /// Whether the cookie is discarded at the end of the session (`"TRUE"` or `"FALSE"`).
    public static let discard = HTTPCookiePropertyKey(rawValue: "Discard")

    /// How many seconds from now the cookie lives (a `String` holding an integer). In Courier it
    /// takes precedence over `expires`.
    public static let maximumAge = HTTPCookiePropertyKey(rawValue: "Max-Age")

    /// The ports the cookie may be sent to (a `String` of comma-separated integers).
    public static let port = HTTPCookiePropertyKey(rawValue: "Port")

    /// Whether scripts are kept away from the cookie (`"TRUE"` or `"FALSE"`); Apple's private key.
    static let httpOnly = HTTPCookiePropertyKey(rawValue: "HttpOnly")

    /// The cookie's SameSite policy (`"strict"`, `"lax"` or `"none"`); Apple's private key.
    static let sameSitePolicy = HTTPCookiePropertyKey(rawValue: "SameSite")

    /// When the cookie was created (a `Double`, seconds since the reference date), as Apple records it.
    static let created = HTTPCookiePropertyKey(rawValue: "Created")
}
