import Foundation

/// A response as the agent sends it to a client.
package struct AgentResponseRecord: Codable, Sendable, Equatable {
    /// The response's URL.
    package var url: String
    /// The status code of an HTTP response; `nil` for other schemes.
    package var statusCode: Int?
    /// An HTTP response's header fields.
    package var headers: [String: String]
    /// The MIME type.
    package var mimeType: String?
    /// The expected length, or -1.
    package var expectedContentLength: Int64
    /// The text encoding name.
    package var textEncodingName: String?

    /// The record of `response`.
    package init(_ response: URLResponse) {
        url = response.url?.absoluteString ?? ""
        let http = response as? HTTPURLResponse
        statusCode = http?.statusCode
        var fields: [String: String] = [:]
        for (key, value) in http?.allHeaderFields ?? [:] {
            if let name = key as? String, let text = value as? String { fields[name] = text }
        }
        headers = fields
        mimeType = response.mimeType
        expectedContentLength = response.expectedContentLength
        textEncodingName = response.textEncodingName
    }

    /// The response again; `nil` when its URL does not parse.
    package func urlResponse() -> URLResponse? {
        guard let url = URL(string: url) else { return nil }
        if let statusCode {
            return HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: "HTTP/1.1", headerFields: headers)
        }
        return URLResponse(url: url, mimeType: mimeType, expectedContentLength: Int(expectedContentLength),
                           textEncodingName: textEncodingName)
    }
}

/// An error as the agent sends it: a `URLError` code, its message and failing URL.
package struct AgentErrorRecord: Codable, Sendable, Equatable {
    /// `URLError.Code`'s raw value (`NSURLErrorDomain`).
    package var code: Int
    /// The localized description.
    package var message: String
    /// The failing URL.
    package var url: String?

    /// The record of `error` (other domains become `URLError.unknown` with their message).
    package init(_ error: any Error, url fallback: URL?) {
        if let urlError = error as? URLError {
            code = urlError.code.rawValue
            url = (urlError.failingURL ?? fallback)?.absoluteString
        } else {
            code = URLError.Code.unknown.rawValue
            url = fallback?.absoluteString
        }
        message = (error as NSError).localizedDescription
    }

    /// A record from its parts.
    package init(code: URLError.Code, message: String, url: String?) {
        self.code = code.rawValue
        self.message = message
        self.url = url
    }

    /// The error again.
    package var urlError: URLError {
        URLError((URLError.Code(rawValue: code) ?? .unknown), url: url.flatMap(URL.init(string:)), description: message)
    }
}
