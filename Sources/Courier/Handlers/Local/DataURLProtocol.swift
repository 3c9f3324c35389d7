import Foundation

/// The handler for `data:` URLs (RFC 2397): the body is in the URL itself.
///
/// The response is a `URLResponse` with the URL's media type (default `text/plain`), its `charset`
/// as `textEncodingName` (default `US-ASCII`) and the decoded length. A malformed URL fails with
/// `URLError.badURL`.
///
/// It keeps no state: `startLoading()` decodes the URL and reports everything at once, and
/// `stopLoading()` has nothing to stop. Both are therefore safe on any thread at any time, which
/// its row declares (``HandlerCapabilities/concurrentStartStop``): the task starts it on the thread
/// that resumes the task, without a queue of its own. The reports still reach the delegate or
/// completion handler only on the session's delegate queue.
final class DataURLProtocol: BuiltInURLProtocol, @unchecked Sendable {

    override class func canInit(with request: URLRequest) -> Bool {
        request.url?.scheme?.lowercased() == "data"
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        guard let url = request.url else { return }
        switch DataURLDecoder.decode(url.absoluteString) {
        case .success(let decoded):
            let response = URLResponse(url: url, mimeType: decoded.mimeType,
                                       expectedContentLength: decoded.data.count,
                                       textEncodingName: decoded.textEncodingName)
            client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
            if !decoded.data.isEmpty { client?.urlProtocol(self, didLoad: decoded.data) }
            client?.urlProtocolDidFinishLoading(self)
        case .failure(let failure):
            client?.urlProtocol(self, didFailWithError: URLError(.badURL, url: url, description: Self.describe(failure)))
        }
    }

    override func stopLoading() {}

    private static func describe(_ failure: DataURLDecoder.Failure) -> String {
        switch failure {
        case .notADataURL: return "The URL is not a data: URL."
        case .missingComma: return "The data: URL has no comma separating the media type from the data."
        case .invalidMediaType(let type): return "The data: URL's media type “\(type)” is not of the form type/subtype."
        case .invalidPercentEscape: return "The data: URL contains a “%” not followed by two hexadecimal digits."
        case .invalidBase64: return "The data: URL's base64 data is not valid base64."
        }
    }
}
