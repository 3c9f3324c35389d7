import Foundation

/// The response to an HTTP or HTTPS load: a `URLResponse` that also carries the status code,
/// the HTTP version and the response header fields.
///
/// The MIME type and text encoding come from the `Content-Type` header and the expected content
/// length from `Content-Length`. Header names are looked up case-insensitively. Like every
/// response, an `HTTPURLResponse` is immutable.
open class HTTPURLResponse: URLResponse, @unchecked Sendable {

    /// The response header fields, in the order received.
    internal let headerFields: HTTPHeaderFields

    /// The HTTP version string the response was received with (for example `"HTTP/1.1"`), if known.
    package let httpVersion: String?

    /// Creates an HTTP response.
    ///
    /// The MIME type and text encoding name (the unquoted `charset` parameter), both lowercased, are
    /// taken from `Content-Type`, and the expected content length from `Content-Length` (`-1` if
    /// absent or not a number). Well-known header names are given their usual capitalisation
    /// (`content-type` becomes `Content-Type`, as HTTP/2 sends names in lower case); other names
    /// keep their spelling.
    ///
    /// - Parameters:
    ///   - url: The URL the response was loaded from.
    ///   - statusCode: The HTTP status code, such as 200 or 404.
    ///   - httpVersion: The HTTP version as received, typically `"HTTP/1.1"`, or `nil`.
    ///   - headerFields: The response header fields, or `nil` for none.
    /// - Returns: The response. Courier never fails to create one; the initializer is failable to
    ///   match Apple's API.
    public init?(url: URL, statusCode: Int, httpVersion: String?, headerFields: [String: String]?) {
        var fields = HTTPHeaderFields()
        if let headerFields {
            for (name, value) in headerFields.sorted(by: { $0.key < $1.key }) {
                fields.set(value, for: HTTPURLResponse.canonicalName(name))
            }
        }
        self.statusCode = statusCode
        self.httpVersion = httpVersion
        self.headerFields = fields
        let contentType = HTTPURLResponse.parseContentType(fields.value(for: "Content-Type"))
        super.init(url: url,
                   mimeType: contentType.mimeType,
                   expectedContentLength: HTTPURLResponse.parseContentLength(fields.value(for: "Content-Length")),
                   textEncodingName: contentType.charset)
    }

    /// Creates an HTTP response from already collected header fields (which keep their order and
    /// may hold comma-joined repeated fields). Used by the loading layers after parsing a response.
    internal convenience init(url: URL, statusCode: Int, httpVersion: String?, fields: HTTPHeaderFields) {
        var canonical = HTTPHeaderFields()
        for field in fields {
            canonical.add(field.value, for: HTTPURLResponse.canonicalName(field.name))
        }
        self.init(url: url, statusCode: statusCode, httpVersion: httpVersion, canonicalFields: canonical)
    }

    /// Creates an HTTP response from header fields whose well-known names already have their usual
    /// capitalisation (``canonicalName(_:)``), as ``CurlResponseHeadParser`` collects them: the
    /// fields are taken as they are.
    internal init(url: URL, statusCode: Int, httpVersion: String?, canonicalFields canonical: HTTPHeaderFields) {
        self.statusCode = statusCode
        self.httpVersion = httpVersion
        self.headerFields = canonical
        let contentType = HTTPURLResponse.parseContentType(canonical.value(for: "Content-Type"))
        super.init(url: url,
                   mimeType: contentType.mimeType,
                   expectedContentLength: HTTPURLResponse.parseContentLength(canonical.value(for: "Content-Length")),
                   textEncodingName: contentType.charset)
    }

    /// Keys used in keyed archives.
    private enum CodingKeys {
        static let statusCode = "NS.statusCode"
        static let headerFields = "NS.allHeaderFields"
        static let httpVersion = "NS.httpVersion"
    }

    /// Decodes a response archived by `encode(with:)`. Requires a keyed coder; returns `nil` if the
    /// archive holds values of the wrong type.
    ///
    /// - Parameter aDecoder: The unarchiver to read from.
    public required init?(coder aDecoder: NSCoder) {
        guard aDecoder.allowsKeyedCoding else { return nil }
        statusCode = aDecoder.decodeInteger(forKey: CodingKeys.statusCode)
        httpVersion = HTTPURLResponse.decodeIfPresent(NSString.self, forKey: CodingKeys.httpVersion, from: aDecoder).map { String($0) }
        var fields = HTTPHeaderFields()
        if aDecoder.containsValue(forKey: CodingKeys.headerFields) {
            // Stored as an array of alternating names and values, to keep the order.
            guard let object = aDecoder.decodeObject(of: [NSArray.self, NSString.self], forKey: CodingKeys.headerFields),
                  let array = object as? NSArray, array.count % 2 == 0
            else { return nil }
            var index = 0
            while index < array.count {
                guard let name = HTTPURLResponse.string(array[index]), let value = HTTPURLResponse.string(array[index + 1]) else { return nil }
                fields.add(value, for: name)
                index += 2
            }
        }
        headerFields = fields
        super.init(coder: aDecoder)
    }

    /// Archives the response, its status code, HTTP version and header fields with keyed coding.
    ///
    /// - Parameter aCoder: The archiver to write to; must support keyed coding.
    open override func encode(with aCoder: NSCoder) {
        super.encode(with: aCoder)
        guard aCoder.allowsKeyedCoding else { return }
        aCoder.encode(statusCode, forKey: CodingKeys.statusCode)
        if let httpVersion {
            aCoder.encode(NSString(string: httpVersion), forKey: CodingKeys.httpVersion)
        }
        let array = NSMutableArray()
        for field in headerFields {
            array.add(NSString(string: field.name))
            array.add(NSString(string: field.value))
        }
        aCoder.encode(array, forKey: CodingKeys.headerFields)
    }

    /// The HTTP status code of the response, such as 200 or 404.
    public let statusCode: Int

    /// All response header fields, keyed by name (`String`) with `String` values. Repeated fields
    /// are joined with commas. Use `value(forHTTPHeaderField:)` for case-insensitive look-up.
    public var allHeaderFields: [AnyHashable: Any] {
        var result = [AnyHashable: Any](minimumCapacity: headerFields.count)
        for field in headerFields {
            result[field.name] = field.value
        }
        return result
    }

    /// Returns the value of the header `field`, compared case-insensitively, or `nil`.
    ///
    /// - Parameter field: The header name (case-insensitive).
    /// - Returns: The header's value, or `nil` if the response has no such header.
    public func value(forHTTPHeaderField field: String) -> String? {
        headerFields.value(for: field)
    }

    /// Returns a short, lowercase English description of `statusCode`, such as `"not found"` for
    /// 404. Codes without a specific phrase get the name of their class: `"informational"`,
    /// `"success"`, `"redirected"`, `"client error"` or `"server error"`.
    ///
    /// - Parameter statusCode: The HTTP status code to describe.
    open class func localizedString(forStatusCode statusCode: Int) -> String {
        if let phrase = reasonPhrases[statusCode] {
            return phrase
        }
        switch statusCode {
        case 100...199: return "informational"
        case 200...299: return "success"
        case 300...399: return "redirected"
        case 400...499: return "client error"
        default: return "server error"
        }
    }

    /// The class name, address, URL, status code and header fields of the response, for logs.
    open override var description: String {
        var text = "<\(type(of: self)): \(_addressDescription)> { URL: \(url?.absoluteString ?? "(null)") }"
        text += " { Status Code: \(statusCode), Headers {\n"
        for field in headerFields.sorted(by: { $0.name.lowercased() < $1.name.lowercased() }) {
            text += "    \"\(field.name)\" = (\n        \"\(field.value)\"\n    );\n"
        }
        text += "} }"
        return text
    }

    /// Whether `value` is an `HTTPURLResponse` equal to this one in its `URLResponse` properties,
    /// status code and header fields.
    ///
    /// - Parameter value: The object to compare with.
    open override func isEqual(_ value: Any?) -> Bool {
        guard let other = value as? HTTPURLResponse, super.isEqual(other) else { return false }
        return other.statusCode == statusCode && other.headerFields == headerFields
    }

    /// A hash consistent with `isEqual(_:)`.
    open override var hash: Int {
        var hasher = Hasher()
        hasher.combine(super.hash)
        hasher.combine(statusCode)
        hasher.combine(headerFields)
        return hasher.finalize()
    }

    // MARK: - Internal

    internal override var _contentDisposition: String? {
        headerFields.value(for: "Content-Disposition")
    }

    /// Splits a `Content-Type` value into its lowercased media type and the unquoted, lowercased
    /// value of its `charset` parameter.
    internal static func parseContentType(_ value: String?) -> (mimeType: String?, charset: String?) {
        guard let value else { return (nil, nil) }
        // Fast path for the usual ASCII value without parameters ("application/json"): trim and
        // lowercase on bytes. Anything else takes the general path below.
        var ascii = value
        let simple: (isSimple: Bool, mimeType: String?) = ascii.withUTF8 { utf8 in
            let bytes = UnsafeRawBufferPointer(utf8)
            for byte in bytes where byte >= 0x80 || byte == UInt8(ascii: ";") { return (false, nil) }
            var lower = 0
            var upper = bytes.count
            while lower < upper, bytes[lower] == 0x20 || bytes[lower] == 0x09 { lower += 1 }
            while upper > lower, bytes[upper - 1] == 0x20 || bytes[upper - 1] == 0x09 { upper -= 1 }
            guard lower < upper else { return (true, nil) }
            return (true, HTTPHeaderFields.key(forASCII: UnsafeRawBufferPointer(rebasing: bytes[lower..<upper])))
        }
        if simple.isSimple { return (simple.mimeType, nil) }
        let typePart = value.prefix(while: { $0 != ";" }).trimmingCharacters(in: .whitespaces).lowercased()
        var charset: String?
        for (name, parameter) in parameters(of: value) where name == "charset" && !parameter.isEmpty {
            // Lowercased, as FoundationNetworking reports it ("UTF-8" becomes "utf-8").
            charset = parameter.lowercased()
            break
        }
        return (typePart.isEmpty ? nil : typePart, charset)
    }

    /// The value of a `Content-Length` header as a byte count, or `-1` if it is absent, negative or
    /// not a number. A comma-joined list of identical values (a repeated header) is accepted.
    internal static func parseContentLength(_ value: String?) -> Int {
        guard let value else { return -1 }
        // Fast path: plain digits, the usual form.
        if !value.isEmpty, value.utf8.count <= 18, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            return Int(value) ?? -1
        }
        var length: Int?
        for part in value.split(separator: ",") {
            guard let parsed = Int(part.trimmingCharacters(in: .whitespaces)), parsed >= 0,
                  length == nil || length == parsed
            else { return -1 }
            length = parsed
        }
        return length ?? -1
    }

    /// The usual capitalisation of a well-known header name, or `name` unchanged.
    internal static func canonicalName(_ name: String) -> String {
        HTTPWellKnownFieldNames.shared.entry(forKey: HTTPHeaderFields.key(for: name))?.canonical ?? name
    }

    /// The usual capitalisation of the well-known header name whose index key
    /// (``HTTPHeaderFields/key(for:)``) is `key`, or `nil` for other names.
    internal static func canonicalName(forKey key: String) -> String? {
        HTTPWellKnownFieldNames.shared.entry(forKey: key)?.canonical
    }

    /// Decodes the object stored under `key`, or `nil` when the archive has no such key (keyed
    /// unarchivers report a missing key as a decoding error otherwise).
    private static func decodeIfPresent<T: NSObject & NSCoding>(_ type: T.Type, forKey key: String, from coder: NSCoder) -> T? {
        guard coder.containsValue(forKey: key) else { return nil }
        return coder.decodeObject(of: type, forKey: key)
    }

    private static func string(_ object: Any) -> String? {
        if let string = object as? NSString { return String(string) }
        return object as? String
    }


    /// Lowercase reason phrases. Codes Apple's loading system names use Apple's wording (such as
    /// "no error" for 200); newer codes use the lowercased IANA registry phrase.
    private static let reasonPhrases: [Int: String] = [
        100: "continue",
        101: "switching protocols",
        102: "processing",
        103: "early hints",
        200: "no error",
        201: "created",
        202: "accepted",
        203: "non-authoritative information",
        204: "no content",
        205: "reset content",
        206: "partial content",
        207: "multi-status",
        208: "already reported",
        226: "im used",
        300: "multiple choices",
        301: "moved permanently",
        302: "found",
        303: "see other",
        304: "not modified",
        305: "needs proxy",
        307: "temporarily redirected",
        308: "permanent redirect",
        400: "bad request",
        401: "unauthorized",
        402: "payment required",
        403: "forbidden",
        404: "not found",
        405: "method not allowed",
        406: "unacceptable",
        407: "proxy authentication required",
        408: "request timed out",
        409: "conflict",
        410: "no longer exists",
        411: "length required",
        412: "precondition failed",
        413: "request too large",
        414: "requested URL too long",
        415: "unsupported media type",
        416: "requested range not satisfiable",
        417: "expectation failed",
        418: "i'm a teapot",
        421: "misdirected request",
        422: "unprocessable content",
        423: "locked",
        424: "failed dependency",
        425: "too early",
        426: "upgrade required",
        428: "precondition required",
        429: "too many requests",
        431: "request header fields too large",
        451: "unavailable for legal reasons",
        500: "internal server error",
        501: "unimplemented",
        502: "bad gateway",
        503: "service unavailable",
        504: "gateway timed out",
        505: "unsupported version",
        506: "variant also negotiates",
        507: "insufficient storage",
        508: "loop detected",
        510: "not extended",
        511: "network authentication required",
    ]
}
