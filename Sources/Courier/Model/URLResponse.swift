import Foundation

/// The metadata of a loaded resource, independent of the URL's scheme: the URL it came from, its
/// MIME type and text encoding, and how many bytes to expect.
///
/// A response never holds the body itself; the body reaches the caller through the task's data,
/// file or stream. Responses are immutable, so they can be shared freely between threads.
/// For HTTP loads the loading system delivers the subclass `HTTPURLResponse`.
open class URLResponse: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {

    // All stored state is immutable (`let`), which is what makes `@unchecked Sendable` hold.
    private let _url: URL?
    private let _mimeType: String?
    private let _expectedContentLength: Int64
    private let _textEncodingName: String?

    /// `true`: responses decode only the classes they expect.
    public static var supportsSecureCoding: Bool { true }

    /// Keys used in keyed archives.
    private enum CodingKeys {
        static let url = "NS.url"
        static let mimeType = "NS.mimeType"
        static let expectedContentLength = "NS.expectedContentLength"
        static let textEncodingName = "NS.textEncodingName"
    }

    /// Decodes a response archived by `encode(with:)`. Requires a keyed coder.
    ///
    /// - Parameter aDecoder: The unarchiver to read from.
    public required init?(coder aDecoder: NSCoder) {
        guard aDecoder.allowsKeyedCoding else { return nil }
        _url = URLResponse.decodeIfPresent(NSURL.self, forKey: CodingKeys.url, from: aDecoder).map { $0 as URL }
        _mimeType = URLResponse.decodeIfPresent(NSString.self, forKey: CodingKeys.mimeType, from: aDecoder).map { String($0) }
        _expectedContentLength = aDecoder.containsValue(forKey: CodingKeys.expectedContentLength)
            ? aDecoder.decodeInt64(forKey: CodingKeys.expectedContentLength) : -1
        _textEncodingName = URLResponse.decodeIfPresent(NSString.self, forKey: CodingKeys.textEncodingName, from: aDecoder).map { String($0) }
        super.init()
    }

    /// Decodes the object stored under `key`, or `nil` when the archive has no such key (keyed
    /// unarchivers report a missing key as a decoding error otherwise).
    private static func decodeIfPresent<T: NSObject & NSCoding>(_ type: T.Type, forKey key: String, from coder: NSCoder) -> T? {
        guard coder.containsValue(forKey: key) else { return nil }
        return coder.decodeObject(of: type, forKey: key)
    }

    /// Archives the response with keyed coding.
    ///
    /// - Parameter aCoder: The archiver to write to; must support keyed coding.
    open func encode(with aCoder: NSCoder) {
        guard aCoder.allowsKeyedCoding else { return }
        if let url = _url {
            aCoder.encode(url as NSURL, forKey: CodingKeys.url)
        }
        if let mimeType = _mimeType {
            aCoder.encode(NSString(string: mimeType), forKey: CodingKeys.mimeType)
        }
        aCoder.encode(_expectedContentLength, forKey: CodingKeys.expectedContentLength)
        if let textEncodingName = _textEncodingName {
            aCoder.encode(NSString(string: textEncodingName), forKey: CodingKeys.textEncodingName)
        }
    }

    /// Returns `copy(with: nil)`.
    open override func copy() -> Any {
        copy(with: nil)
    }

    /// Returns the response itself: responses are immutable, so a copy would be identical.
    ///
    /// - Parameter zone: Ignored.
    open func copy(with zone: NSZone? = nil) -> Any {
        self
    }

    /// Creates a response with the given metadata.
    ///
    /// - Parameters:
    ///   - url: The URL the response was loaded from.
    ///   - mimeType: The MIME type of the content, or `nil` if unknown.
    ///   - length: The expected length of the content in bytes, or `-1` if unknown.
    ///   - name: The name of the content's text encoding (for example `"utf-8"`), or `nil`.
    public init(url: URL, mimeType: String?, expectedContentLength length: Int, textEncodingName name: String?) {
        _url = url
        _mimeType = mimeType
        _expectedContentLength = Int64(length)
        _textEncodingName = name
        super.init()
    }

    /// The URL the response was loaded from.
    open var url: URL? { _url }

    /// The MIME type of the content as reported by the source (for HTTP, the `Content-Type`
    /// header without its parameters), or `nil` if unknown.
    open var mimeType: String? { _mimeType }

    /// The number of content bytes the source announced, or `-1` if it did not say.
    ///
    /// The figure is advisory: the data actually delivered may be longer or shorter.
    open var expectedContentLength: Int64 { _expectedContentLength }

    /// The name of the text encoding reported by the source, or `nil`: for HTTP the `charset`
    /// parameter of `Content-Type` in lower case (as FoundationNetworking reports it), otherwise
    /// the name given to the initializer.
    open var textEncodingName: String? { _textEncodingName }

    /// A file name to save the content under.
    ///
    /// Courier uses, in order: the file name given by an HTTP `Content-Disposition` header
    /// (`filename*` preferred over `filename`), the last path component of the URL, and finally
    /// `"Unknown"`. A `/` in the name becomes `_`, so the result is always a plain file name.
    open var suggestedFilename: String? {
        if let disposition = _contentDisposition,
           let name = Self.filename(fromContentDisposition: disposition) {
            return name
        }
        // The root's last path component is "/" itself: no name, not "_".
        if let url = _url, url.lastPathComponent != "/", let name = Self.sanitizedFilename(url.lastPathComponent) {
            return name
        }
        return "Unknown"
    }

    /// Whether `value` is a response of the same class with the same URL, MIME type, expected
    /// length and text encoding name.
    ///
    /// - Parameter value: The object to compare with.
    open override func isEqual(_ value: Any?) -> Bool {
        guard let other = value as? URLResponse else { return false }
        if other === self { return true }
        return type(of: other) == type(of: self)
            && other._url == _url
            && other._mimeType == _mimeType
            && other._expectedContentLength == _expectedContentLength
            && other._textEncodingName == _textEncodingName
    }

    /// A hash consistent with `isEqual(_:)`.
    open override var hash: Int {
        var hasher = Hasher()
        hasher.combine(_url)
        hasher.combine(_mimeType)
        hasher.combine(_expectedContentLength)
        hasher.combine(_textEncodingName)
        return hasher.finalize()
    }

    /// The class name, address and URL of the response, for logs.
    open override var description: String {
        "<\(type(of: self)): \(_addressDescription)> { URL: \(_url?.absoluteString ?? "(null)") }"
    }

    // MARK: - Internal

    /// The raw `Content-Disposition` header, if the response has one. `URLResponse` has no
    /// headers; `HTTPURLResponse` overrides this.
    internal var _contentDisposition: String? { nil }

    /// The object's address as `0x…`, for descriptions.
    internal var _addressDescription: String {
        "0x" + String(UInt(bitPattern: ObjectIdentifier(self)), radix: 16)
    }

    /// Extracts a file name from a `Content-Disposition` value (RFC 6266): the RFC 8187
    /// `filename*` parameter when present and decodable, else `filename`. Returns `nil` when no
    /// usable name is found.
    internal static func filename(fromContentDisposition value: String) -> String? {
        var plain: String?
        var extended: String?
        for (name, parameter) in parameters(of: value) {
            switch name {
            case "filename*":
                extended = decodeExtendedValue(parameter)
            case "filename":
                plain = parameter
            default:
                continue
            }
        }
        if let extended, let name = sanitizedFilename(extended) {
            return name
        }
        if let plain, let name = sanitizedFilename(plain) {
            return name
        }
        return nil
    }

    /// Parses the `;`-separated parameters following the first token of a header value, with
    /// lowercased names and unquoted values.
    internal static func parameters(of value: String) -> [(String, String)] {
        var result: [(String, String)] = []
        let scalars = Array(value.unicodeScalars)
        var position = 0
        // Skip the disposition type / media type.
        while position < scalars.count && scalars[position] != ";" {
            position += 1
        }
        while position < scalars.count {
            position += 1 // the ';'
            while position < scalars.count && (scalars[position] == " " || scalars[position] == "\t") {
                position += 1
            }
            var name = String.UnicodeScalarView()
            while position < scalars.count && scalars[position] != "=" && scalars[position] != ";" {
                name.append(scalars[position])
                position += 1
            }
            let parameterName = String(name).trimmingCharacters(in: .whitespaces).lowercased()
            guard position < scalars.count, scalars[position] == "=" else { continue }
            position += 1
            while position < scalars.count && (scalars[position] == " " || scalars[position] == "\t") {
                position += 1
            }
            var parameterValue = String.UnicodeScalarView()
            if position < scalars.count && scalars[position] == "\"" {
                position += 1
                while position < scalars.count && scalars[position] != "\"" {
                    if scalars[position] == "\\" && position + 1 < scalars.count {
                        position += 1
                    }
                    parameterValue.append(scalars[position])
                    position += 1
                }
                // Skip the closing quote and anything up to the next ';'.
                while position < scalars.count && scalars[position] != ";" {
                    position += 1
                }
                result.append((parameterName, String(parameterValue)))
            } else {
                while position < scalars.count && scalars[position] != ";" {
                    parameterValue.append(scalars[position])
                    position += 1
                }
                result.append((parameterName, String(parameterValue).trimmingCharacters(in: .whitespaces)))
            }
        }
        return result
    }

    /// Decodes an RFC 8187 extended value such as `UTF-8''na%C3%AFve.txt`. Only UTF-8 and
    /// ISO-8859-1 are supported; anything else gives `nil`.
    private static func decodeExtendedValue(_ value: String) -> String? {
        let parts = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        let charset = parts[0].lowercased()
        var bytes: [UInt8] = []
        var utf8 = Substring(parts[2]).utf8.makeIterator()
        while let byte = utf8.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = utf8.next(), let low = utf8.next(),
                      let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        switch charset {
        case "utf-8":
            return String(validating: bytes, as: UTF8.self)
        case "iso-8859-1":
            return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        default:
            return nil
        }
    }

    /// Makes `candidate` a safe plain file name: every `/` becomes `_`, as FoundationNetworking
    /// does (`a/b.txt` gives `a_b.txt`, never a path), and empty names, `.`, `..` and names holding
    /// control characters give `nil`.
    internal static func sanitizedFilename(_ candidate: String) -> String? {
        let trimmed = candidate.replacingOccurrences(of: "/", with: "_").trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed != ".", trimmed != "..",
              !trimmed.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else { return nil }
        return trimmed
    }
}
