import Foundation

/// Parses `Set-Cookie` response header values into cookies, following RFC 6265 section 5.2.
///
/// The parser is lenient where the RFC asks it to be (unknown attributes are skipped, malformed
/// attribute values are ignored) and strict where a cookie could leak to the wrong site (a
/// `Domain` attribute that does not domain-match the request host rejects the whole cookie).
enum SetCookieParser {

    /// The cookies described by every `Set-Cookie` field (any letter case) of a response.
    ///
    /// - Parameters:
    ///   - headerFields: The response's header fields; fields other than `Set-Cookie` are ignored.
    ///   - url: The URL the response came from; it supplies the default domain and path.
    /// - Returns: The accepted cookies, in header order.
    static func cookies(fromHeaderFields headerFields: [String: String], for url: URL) -> [HTTPCookie] {
        // Dictionary order is unspecified; sort the (rare) case-variant keys for a stable result.
        let values = headerFields
            .filter { $0.key.caseInsensitiveCompare("Set-Cookie") == .orderedSame }
            .sorted { $0.key < $1.key }
            .map(\.value)
        var result: [HTTPCookie] = []
        for value in values {
            for single in splitFoldedHeaderValue(value) {
                if let cookie = cookie(fromSetCookie: single, for: url) {
                    result.append(cookie)
                }
            }
        }
        return result
    }

    // MARK: - Splitting a folded header value

    /// Splits a header value that may hold several `Set-Cookie` values joined by commas.
    ///
    /// A comma only separates two cookies when the text after it starts a new `name=value`
    /// pair whose name is a valid token (RFC 6265's cookie-name); the comma inside an `Expires`
    /// date (`Wed, 09 Jun 2021 …`) or inside a value (`next=/a,http://h/?q=1`) is kept.
    static func splitFoldedHeaderValue(_ value: String) -> [String] {
        let characters = Array(value)
        var pieces: [String] = []
        var current = ""
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if character == ",", startsNewCookie(characters, after: index) {
                pieces.append(current)
                current = ""
            } else {
                current.append(character)
            }
            index += 1
        }
        pieces.append(current)
        return pieces
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
    }

    /// Whether the text following the comma at `commaIndex` is `token=…`, optional white space
    /// allowed around the token.
    private static func startsNewCookie(_ characters: [Character], after commaIndex: Int) -> Bool {
        var index = commaIndex + 1
        while index < characters.count, characters[index] == " " || characters[index] == "\t" {
            index += 1
        }
        var nameLength = 0
        while index < characters.count, isTokenCharacter(characters[index]) {
            nameLength += 1
            index += 1
        }
        while index < characters.count, characters[index] == " " || characters[index] == "\t" {
            index += 1
        }
        return nameLength > 0 && index < characters.count && characters[index] == "="
    }

    /// RFC 2616 separators, which a token cannot hold.
    private static let separators: Set<Character> = Set("()<>@,;:\\\"/[]?={} \t")

    /// Whether `character` may appear in a token: visible ASCII that is not a separator.
    private static func isTokenCharacter(_ character: Character) -> Bool {
        guard let ascii = character.asciiValue, ascii > 0x20, ascii < 0x7F else { return false }
        return !separators.contains(character)
    }

    // MARK: - Parsing one cookie

    /// Parses one `Set-Cookie` value received from `url`.
    ///
    /// - Returns: The cookie, or `nil` when the value is malformed or must be ignored (no `=` in
    ///   the name-value pair, an empty name, control characters, or a foreign `Domain`).
    static func cookie(fromSetCookie setCookie: String, for url: URL) -> HTTPCookie? {
        guard let properties = properties(fromSetCookie: setCookie, for: url) else { return nil }
        return HTTPCookie(properties: properties)
    }

    /// The `HTTPCookie` property dictionary for one `Set-Cookie` value received from `url`, or
    /// `nil` when the cookie must be ignored.
    static func properties(fromSetCookie setCookie: String, for url: URL) -> [HTTPCookiePropertyKey: Any]? {
        guard let host = url.host?.lowercased(), !host.isEmpty else { return nil }

        let parts = split(setCookie[...], at: ";")
        guard let pair = parts.first, let halves = cut(pair, at: "=") else { return nil }
        let name = trimmed(halves.before)
        let value = trimmed(halves.after)
        guard !name.isEmpty, !containsControlCharacter(name), !containsControlCharacter(value) else {
            return nil
        }

        var expires: Date?
        var maxAge: Int?
        var domainAttribute: String?
        var pathAttribute: String?
        var secure = false
        var httpOnly = false
        var sameSite: String?
        var discard = false
        var version = "0"
        var comment: String?
        var commentURL: String?
        var ports: String?

        for attribute in parts.dropFirst() {
            let attributeName: String
            let attributeValue: String
            if let halves = cut(attribute, at: "=") {
                attributeName = trimmed(halves.before)
                attributeValue = trimmed(halves.after)
            } else {
                attributeName = trimmed(attribute[...])
                attributeValue = ""
            }
            switch attributeName.lowercased() {
            case "expires":
                if let date = parseDate(attributeValue) { expires = date }
            case "max-age":
                if let seconds = parseMaxAge(attributeValue) { maxAge = seconds }
            case "domain":
                var domain = attributeValue
                if domain.hasPrefix(".") { domain.removeFirst() }
                if !domain.isEmpty { domainAttribute = domain.lowercased() }
            case "path":
                pathAttribute = attributeValue
            case "secure":
                secure = true
            case "httponly":
                httpOnly = true
            case "discard":
                discard = true
            case "version":
                if unquoted(attributeValue) == "1" { version = "1" }
            case "comment":
                comment = unquoted(attributeValue)
            case "commenturl":
                commentURL = unquoted(attributeValue)
            case "port":
                let list = unquoted(attributeValue)
                if !list.isEmpty { ports = list }
            case "samesite":
                switch attributeValue.lowercased() {
                case "strict": sameSite = "strict"
                case "lax": sameSite = "lax"
                case "none": sameSite = "none"
                default: break
                }
            default:
                break
            }
        }

        var properties: [HTTPCookiePropertyKey: Any] = [
            .name: name,
            .value: value,
            .version: version,
        ]

        // Domain (RFC 6265 5.3 steps 4-6): a domain cookie is stored with a leading dot, as
        // Apple does; a host-only cookie stores the bare request host. A public suffix is no
        // cookie domain: from that very host the cookie is host-only, from any other it is ignored.
        if let domain = domainAttribute {
            if domain == host, !isIPAddress(host), PublicSuffixList.system.isPublicSuffix(domain) {
                properties[.domain] = host
            } else if domain == host {
                properties[.domain] = isIPAddress(host) || !domain.contains(".") ? host : "." + domain
            } else {
                guard !isIPAddress(host), domain.contains("."), domainMatches(host: host, domain: domain),
                      !PublicSuffixList.system.isPublicSuffix(domain) else {
                    return nil
                }
                properties[.domain] = "." + domain
            }
        } else {
            properties[.domain] = host
        }

        if let path = pathAttribute, path.hasPrefix("/") {
            properties[.path] = path
        } else {
            properties[.path] = defaultPath(for: url)
        }

        // Max-Age wins over Expires (RFC 6265 5.3 step 3). A cookie with neither, or with the
        // RFC 2965 `Discard` attribute, is session-only; `.discard` is always given, so that a
        // version 1 cookie does not fall back on init(properties:)'s default for that version.
        if let seconds = maxAge {
            properties[.expires] = seconds <= 0 ? Date.distantPast : Date(timeIntervalSinceNow: TimeInterval(seconds))
        } else if let expires {
            properties[.expires] = expires
        }
        properties[.discard] = discard || properties[.expires] == nil ? "TRUE" : "FALSE"
        if let comment { properties[.comment] = comment }
        if let commentURL { properties[.commentURL] = commentURL }
        if let ports { properties[.port] = ports }
        if secure { properties[.secure] = "TRUE" }
        if httpOnly { properties[.httpOnly] = "TRUE" }
        if let sameSite { properties[.sameSitePolicy] = sameSite }
        return properties
    }

    /// Parses a `Max-Age` value: an optional `-` followed by digits (RFC 6265 5.2.2).
    static func parseMaxAge(_ text: String) -> Int? {
        guard let first = text.first, first == "-" || first.isCookieASCIIDigit else { return nil }
        let digits = first == "-" ? text.dropFirst() : text[...]
        guard !digits.isEmpty, digits.allSatisfy(\.isCookieASCIIDigit) else { return nil }
        // Saturate absurdly large values instead of failing.
        guard let magnitude = Int(digits) else { return first == "-" ? Int.min : Int.max }
        return first == "-" ? -magnitude : magnitude
    }

    // MARK: - Dates (RFC 6265 section 5.1.1)

    /// Parses a cookie date with RFC 6265's lenient algorithm.
    ///
    /// It accepts RFC 1123 (`Sun, 06 Nov 1994 08:49:37 GMT`), RFC 850
    /// (`Sunday, 06-Nov-94 08:49:37 GMT`), asctime (`Sun Nov  6 08:49:37 1994`) and most of
    /// their variants seen in the wild. Times are always taken as UTC.
    static func parseDate(_ text: String) -> Date? {
        var time: (hour: Int, minute: Int, second: Int)?
        var dayOfMonth: Int?
        var month: Int?
        var year: Int?

        for token in dateTokens(text) {
            if time == nil, let parsed = parseTime(token) {
                time = parsed
            } else if dayOfMonth == nil, let parsed = leadingNumber(token, minDigits: 1, maxDigits: 2) {
                dayOfMonth = parsed
            } else if month == nil, let parsed = parseMonth(token) {
                month = parsed
            } else if year == nil, let parsed = leadingNumber(token, minDigits: 2, maxDigits: 4) {
                year = parsed
            }
        }

        guard let time, let dayOfMonth, let month, var year else { return nil }
        if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
        guard (1...31).contains(dayOfMonth), year >= 1601,
              time.hour <= 23, time.minute <= 59, time.second <= 59,
              dayOfMonth <= daysInMonth(month, year: year)
        else { return nil }

        let days = daysFromCivil(year: year, month: month, day: dayOfMonth)
        let seconds = days * 86_400 + time.hour * 3_600 + time.minute * 60 + time.second
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// Splits a date string on RFC 6265's delimiter characters.
    private static func dateTokens(_ text: String) -> [Substring] {
        text.split { character in
            guard let scalar = character.unicodeScalars.first, character.unicodeScalars.count == 1,
                  scalar.isASCII else { return false }
            switch scalar.value {
            case 0x09, 0x20...0x2F, 0x3B...0x40, 0x5B...0x60, 0x7B...0x7E: return true
            default: return false
            }
        }
    }

    /// Reads `hh:mm:ss` (one or two digits each) at the start of a token.
    private static func parseTime(_ token: Substring) -> (hour: Int, minute: Int, second: Int)? {
        let fields = token.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard fields.count == 3,
              let hour = exactNumber(fields[0], maxDigits: 2),
              let minute = exactNumber(fields[1], maxDigits: 2),
              let second = leadingNumber(fields[2], minDigits: 1, maxDigits: 2)
        else { return nil }
        return (hour, minute, second)
    }

    /// A field made only of one to `maxDigits` digits.
    private static func exactNumber(_ text: Substring, maxDigits: Int) -> Int? {
        guard !text.isEmpty, text.count <= maxDigits, text.allSatisfy(\.isCookieASCIIDigit) else { return nil }
        return Int(text)
    }

    /// `minDigits...maxDigits` digits at the start of the token, followed by nothing or a non-digit.
    private static func leadingNumber(_ token: Substring, minDigits: Int, maxDigits: Int) -> Int? {
        let digits = token.prefix(while: \.isCookieASCIIDigit)
        guard digits.count >= minDigits, digits.count <= maxDigits else { return nil }
        return Int(digits)
    }

    /// The month number (1-12) named by the first three letters of a token.
    private static func parseMonth(_ token: Substring) -> Int? {
        let names = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        guard token.count >= 3 else { return nil }
        let prefix = token.prefix(3).lowercased()
        guard let index = names.firstIndex(of: prefix) else { return nil }
        return index + 1
    }

    private static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2:
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
            return leap ? 29 : 28
        case 4, 6, 9, 11:
            return 30
        default:
            return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    // MARK: - Matching helpers (RFC 6265 sections 5.1.3 and 5.1.4)

    /// Whether `host` domain-matches `domain` (both lower-case, `domain` without a leading dot).
    static func domainMatches(host: String, domain: String) -> Bool {
        if host == domain { return true }
        guard !isIPAddress(host) else { return false }
        return host.hasSuffix("." + domain)
    }

    /// Whether a request path path-matches a cookie path.
    static func pathMatches(requestPath: String, cookiePath: String) -> Bool {
        if requestPath == cookiePath { return true }
        guard requestPath.hasPrefix(cookiePath) else { return false }
        if cookiePath.hasSuffix("/") { return true }
        return requestPath.dropFirst(cookiePath.count).first == "/"
    }

    /// The request path used for cookie matching: the URL's encoded path, or `/` when empty.
    static func requestPath(of url: URL) -> String {
        let path = url.path(percentEncoded: true)
        return path.hasPrefix("/") ? path : "/"
    }

    /// RFC 6265's default-path: the request path up to, but not including, its last `/`.
    static func defaultPath(for url: URL) -> String {
        let path = url.path(percentEncoded: true)
        guard path.hasPrefix("/"), let lastSlash = path.lastIndex(of: "/"), lastSlash != path.startIndex else {
            return "/"
        }
        return String(path[path.startIndex..<lastSlash])
    }

    /// Whether `host` is an IPv4 or IPv6 literal.
    static func isIPAddress(_ host: String) -> Bool {
        if host.contains(":") { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets.allSatisfy { octet in
            !octet.isEmpty && octet.count <= 3 && octet.allSatisfy(\.isCookieASCIIDigit)
        }
    }

    // MARK: - Small helpers

    /// `text` without one pair of enclosing double quotes (RFC 2965 attribute values may be quoted).
    private static func unquoted(_ text: String) -> String {
        guard text.count >= 2, text.first == "\"", text.last == "\"" else { return text }
        return String(text.dropFirst().dropLast())
    }

    /// `text` split at every `separator`. The delimiters are found among Unicode scalars, as RFC 6265
    /// finds them among octets: as Characters, a combining mark right after `;` or `=` would fuse
    /// with it and hide it (found by the set-cookie fuzzer).
    private static func split(_ text: Substring, at separator: Unicode.Scalar) -> [Substring] {
        text.unicodeScalars.split(separator: separator, omittingEmptySubsequences: false).map(Substring.init)
    }

    /// `text` before and after its first `separator` scalar, or nil when it has none.
    private static func cut(_ text: Substring, at separator: Unicode.Scalar) -> (before: Substring, after: Substring)? {
        let scalars = text.unicodeScalars
        guard let index = scalars.firstIndex(of: separator) else { return nil }
        return (Substring(scalars[..<index]), Substring(scalars[scalars.index(after: index)...]))
    }

    private static func trimmed(_ text: Substring) -> String {
        text.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
    }

    private static func containsControlCharacter(_ text: String) -> Bool {
        text.unicodeScalars.contains { scalar in
            (scalar.value < 0x20 && scalar.value != 0x09) || scalar.value == 0x7F
        }
    }
}

fileprivate extension Character {
    /// Whether the character is one of the ASCII digits `0`-`9`.
    var isCookieASCIIDigit: Bool {
        guard let ascii = asciiValue else { return false }
        return ascii >= 0x30 && ascii <= 0x39
    }
}
