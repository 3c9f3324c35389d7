import Foundation
import Courier

/// Renders requests and responses as header lines, for `-i/--include` (response headers before the body)
/// and `-v/--verbose` (request and response on standard error, prefixed `> ` and `< `).
enum ResponsePrinter {
    /// The response's header block, one line per element, without line ends.
    ///
    /// An `HTTPURLResponse` gives its status line (`HTTP/1.1 404 not found`, the reason phrase from
    /// `HTTPURLResponse.localizedString(forStatusCode:)`) and its header fields sorted by name. Any
    /// other response (data:, file: ...) gives `Content-Type` (MIME type and charset from
    /// `textEncodingName`) and `Content-Length` (when the length is known).
    static func headerLines(for response: URLResponse) -> [String] {
        if let http = response as? HTTPURLResponse {
            let reason = HTTPURLResponse.localizedString(forStatusCode: http.statusCode)
            var lines = ["HTTP/1.1 \(http.statusCode) \(reason)"]
            let fields = http.allHeaderFields.map { (String(describing: $0.key), String(describing: $0.value)) }
            for (name, value) in fields.sorted(by: { $0.0.lowercased() < $1.0.lowercased() }) {
                lines.append("\(name): \(value)")
            }
            return lines
        }
        var lines: [String] = []
        if let mimeType = response.mimeType {
            if let charset = response.textEncodingName {
                lines.append("Content-Type: \(mimeType); charset=\(charset)")
            } else {
                lines.append("Content-Type: \(mimeType)")
            }
        }
        if response.expectedContentLength >= 0 {
            lines.append("Content-Length: \(response.expectedContentLength)")
        }
        return lines
    }

    /// The `-i` block: header lines and a blank line, ready to go before the body.
    static func includeBlock(for response: URLResponse) -> Data {
        Data((headerLines(for: response).map { $0 + "\n" }.joined() + "\n").utf8)
    }

    /// The request as `-v` shows it: method and URL, then its header fields and body size.
    static func requestLines(for request: URLRequest) -> [String] {
        var lines = ["\(request.httpMethod ?? "GET") \(request.url?.absoluteString ?? "")"]
        let fields = request.allHTTPHeaderFields ?? [:]
        for (name, value) in fields.sorted(by: { $0.key.lowercased() < $1.key.lowercased() }) {
            lines.append("\(name): \(value)")
        }
        if let body = request.httpBody {
            lines.append("(\(body.count) byte body)")
        }
        return lines
    }

    /// Writes `lines` to standard error with `prefix` (`> ` or `< `) and a closing prefix-only line.
    static func trace(_ lines: [String], prefix: String) {
        for line in lines { Console.err(prefix + line) }
        Console.err(prefix.trimmingCharacters(in: .whitespaces))
    }
}
