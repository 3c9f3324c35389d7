import Courier
import Foundation
import FoundationNetworking

/// Courier's responses as FoundationNetworking's: an `HTTPURLResponse` (a plugin's HTTP-like
/// response, or an http(s) load a plugin redirected to) keeps its status and header fields, any
/// other response its URL, MIME type, expected length and text encoding.
enum FoundationResponseConversion {
    /// FoundationNetworking's copy of `response`; `fallbackURL` stands in for a response without URL.
    static func foundationResponse(from response: Courier.URLResponse, fallbackURL: URL) -> FoundationNetworking.URLResponse {
        let url = response.url ?? fallbackURL
        if let http = response as? Courier.HTTPURLResponse,
           let converted = FoundationNetworking.HTTPURLResponse(url: url, statusCode: http.statusCode, httpVersion: nil,
                                                                headerFields: headerFields(of: http)) {
            return converted
        }
        return FoundationNetworking.URLResponse(url: url, mimeType: response.mimeType,
                                                expectedContentLength: Int(clamping: response.expectedContentLength),
                                                textEncodingName: response.textEncodingName)
    }

    private static func headerFields(of response: Courier.HTTPURLResponse) -> [String: String] {
        var fields: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name] = value }
        }
        return fields
    }
}
