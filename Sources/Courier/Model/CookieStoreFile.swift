import Foundation

/// The contents of a persistent cookie storage's file (`Cookies.json`): JSON holding every
/// cookie that is neither session-only nor expired, oldest first.
///
/// ```json
/// {"format": "Courier.Cookies", "version": 1,
///  "cookies": [{"name": "id", "value": "42", "domain": ".example.com", "path": "/",
///               "expires": 1767225600, "secure": true, "created": 1735689600, "stored": 1735689600}]}
/// ```
///
/// Dates are seconds since 1970. A file in any other shape is damaged: decoding returns `nil`
/// and the storage starts empty.
enum CookieStoreFile {

    /// One cookie as the file stores it.
    struct Record: Codable, Equatable {
        var name: String
        var value: String
        var domain: String
        var path: String
        var expires: Double?
        var secure: Bool?
        var httpOnly: Bool?
        var version: Int?
        var comment: String?
        var commentURL: String?
        var ports: [Int]?
        var sameSite: String?
        var created: Double?
        /// When the cookie was put into the storage (for `removeCookies(since:)`).
        var stored: Double?
    }

    /// The whole file.
    struct Document: Codable {
        var format: String
        var version: Int
        var cookies: [Record]
    }

    /// The value of `Document.format`.
    static let format = "Courier.Cookies"

    /// The layout version this code writes and reads.
    static let version = 1

    /// A cookie read back from the file, with the date it was first stored.
    struct Stored {
        var cookie: HTTPCookie
        var storedAt: Date
    }

    /// What `decode(_:at:)` found in an intact file.
    struct Decoded {
        /// The cookies to keep, in file order (oldest first).
        var cookies: [Stored]
        /// Whether some records were left out (expired, session-only, over ``CookieJarLimits`` or
        /// unusable), so the file should be rewritten.
        var droppedSome: Bool
    }

    /// Encodes the cookies worth keeping: session-only and (at `date`) expired ones are left out.
    ///
    /// - Parameters:
    ///   - cookies: The storage's cookies with their storage dates, oldest first.
    ///   - date: The current date.
    static func encode(_ cookies: [Stored], at date: Date = Date()) -> Data? {
        let records = cookies
            .filter { !$0.cookie.isSessionOnly && !$0.cookie.isExpired(at: date) }
            .map { record(for: $0.cookie, storedAt: $0.storedAt) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try? encoder.encode(Document(format: format, version: version, cookies: records))
    }

    /// Decodes a file; `nil` when it is damaged (not JSON, another format or version).
    ///
    /// - Parameters:
    ///   - data: The file's contents.
    ///   - date: The current date; cookies expired at it are dropped.
    static func decode(_ data: Data, at date: Date = Date()) -> Decoded? {
        guard let document = try? JSONDecoder().decode(Document.self, from: data),
              document.format == format, document.version == version else { return nil }
        var result = Decoded(cookies: [], droppedSome: false)
        for record in document.cookies {
            guard let cookie = cookie(from: record), !cookie.isSessionOnly, !cookie.isExpired(at: date),
                  CookieJarLimits.accepts(cookie) else {
                result.droppedSome = true
                continue
            }
            let storedAt = record.stored.map { Date(timeIntervalSince1970: $0) } ?? cookie.creationDate
            result.cookies.append(Stored(cookie: cookie, storedAt: storedAt))
        }
        return result
    }

    /// The record for one cookie.
    static func record(for cookie: HTTPCookie, storedAt: Date) -> Record {
        Record(name: cookie.name, value: cookie.value, domain: cookie.domain, path: cookie.path,
               expires: cookie.expiresDate?.timeIntervalSince1970,
               secure: cookie.isSecure ? true : nil, httpOnly: cookie.isHTTPOnly ? true : nil,
               version: cookie.version, comment: cookie.comment, commentURL: cookie.commentURL?.absoluteString,
               ports: cookie.portList?.map(\.intValue), sameSite: cookie.sameSitePolicy,
               created: cookie.creationDate.timeIntervalSince1970, stored: storedAt.timeIntervalSince1970)
    }

    /// The cookie a record describes, or `nil` when `HTTPCookie` rejects it.
    static func cookie(from record: Record) -> HTTPCookie? {
        var properties: [HTTPCookiePropertyKey: Any] = [
            .name: record.name,
            .value: record.value,
            .domain: record.domain,
            .path: record.path,
            .version: String(record.version ?? 0),
            .discard: "FALSE",
        ]
        if let expires = record.expires { properties[.expires] = Date(timeIntervalSince1970: expires) }
        if record.secure == true { properties[.secure] = "TRUE" }
        if record.httpOnly == true { properties[.httpOnly] = "TRUE" }
        if let comment = record.comment { properties[.comment] = comment }
        if let commentURL = record.commentURL.flatMap(URL.init(string:)) { properties[.commentURL] = commentURL }
        if let ports = record.ports, !ports.isEmpty {
            properties[.port] = ports.map(String.init).joined(separator: ",")
        }
        if let sameSite = record.sameSite { properties[.sameSitePolicy] = sameSite }
        if let created = record.created { properties[.created] = Date(timeIntervalSince1970: created) }
        return HTTPCookie(properties: properties)
    }
}
