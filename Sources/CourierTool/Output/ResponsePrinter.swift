import Foundation
import Courier

/// Renders requests and responses as header lines, for `-i/--include` (response headers before the body)
/// and `-v/--verbose` for the schemes libcurl does not trace (request and response on standard error,
/// prefixed `> ` and `< `; see ``VerboseTrace``).
enum ResponsePrinter {
    /// The response's header block, one line per element, without line ends.
    ///
    /// An `HTTPURLResponse` gives its status line (``statusLine(for:)``) and its header fields sorted
    /// by name. Any
    /// other response (data:, file: ...) gives `Content-Type` (MIME type and charset from
    /// `textEncodingName`) and `Content-Length` (when the length is known).
    static func headerLines(for response: URLResponse) -> [String] {
        if let http = response as? HTTPURLResponse {
            var lines = [statusLine(for: http)]
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

    /// The status line as curl shows it: the HTTP version the response came with, the status and,
    /// for HTTP/1, the standard reason phrase (`HTTP/1.1 404 Not Found`, `HTTP/2 200`). The server's
    /// own reason phrase is not kept by the library, so the standard one stands in for it.
    static func statusLine(for response: HTTPURLResponse) -> String {
        let version = version(of: response).map { "HTTP/" + $0 } ?? "HTTP"
        let phrase = version.hasPrefix("HTTP/1") ? HTTPReasonPhrase.phrase(for: response.statusCode) : nil
        return [version, String(response.statusCode), phrase].compactMap { $0 }.joined(separator: " ")
    }

    /// The HTTP version of `response` (`1.1`, `2`), if the library knows it.
    static func version(of response: HTTPURLResponse) -> String? {
        guard let version = response.httpVersion, version.uppercased().hasPrefix("HTTP/") else { return nil }
        let number = String(version.dropFirst(5))
        return number == "2.0" ? "2" : number
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

    /// Writes `lines` to standard error with `prefix` (`> ` or `< `) and a closing prefix-only line,
    /// as the wire trace ends a head (``HeaderBlocks``).
    static func trace(_ lines: [String], prefix: String) {
        for line in lines { Console.err(prefix + line) }
        Console.err(prefix)
    }
}
