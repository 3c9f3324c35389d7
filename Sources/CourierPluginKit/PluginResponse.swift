import Foundation

/// A response a plugin handler reports: a plain response (status 0) or an HTTP-like one.
public struct PluginResponse: Sendable {
    /// The response's URL; nil for the request's URL.
    public var url: URL?
    /// 0 for a plain `URLResponse`; 100…599 for an `HTTPURLResponse` with ``headerFields``.
    public var statusCode: Int
    /// The MIME type, such as `text/plain`.
    public var mimeType: String?
    /// The text encoding name, such as `utf-8`.
    public var textEncodingName: String?
    /// The body's length in bytes, or -1 when unknown.
    public var expectedContentLength: Int64
    /// Header fields (used for HTTP-like responses).
    public var headerFields: [String: String]

    /// A response; every argument has the default of a plain response of unknown length.
    public init(url: URL? = nil, statusCode: Int = 0, mimeType: String? = nil, textEncodingName: String? = nil,
                expectedContentLength: Int64 = -1, headerFields: [String: String] = [:]) {
        self.url = url
        self.statusCode = statusCode
        self.mimeType = mimeType
        self.textEncodingName = textEncodingName
        self.expectedContentLength = expectedContentLength
        self.headerFields = headerFields
    }
}
