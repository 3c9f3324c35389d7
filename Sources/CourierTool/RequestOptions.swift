import Foundation
import Courier

/// The request-shaping options (`-X`, `-H`, `-d`, `-m`) and how they turn a URL into a `URLRequest`.
struct RequestOptions: Sendable {
    /// One `-H "Name: value"` header.
    struct Header: Sendable, Equatable {
        let name: String
        let value: String
    }

    /// `-X/--request`; nil means GET, or POST when there is a body.
    var method: String?
    /// `-H/--header`, in command-line order; a later one with the same name replaces an earlier one.
    var headers: [Header] = []
    /// `-d/--data`, already read (a value starting with `@` names a file to send).
    var body: Data?
    /// `-m/--max-time`.
    var maxTime: TimeInterval?

    /// The method the request is sent with.
    var effectiveMethod: String { method ?? (body == nil ? "GET" : "POST") }

    /// Builds the request for `url`. A body without a `Content-Type` header is sent as
    /// `application/x-www-form-urlencoded`, as curl does.
    func makeRequest(for url: URL) -> URLRequest {
        var request = URLRequest(url: url)
        request.httpMethod = effectiveMethod
        for header in headers {
            request.setValue(header.value, forHTTPHeaderField: header.name)
        }
        if let body {
            request.httpBody = body
            if request.value(forHTTPHeaderField: "Content-Type") == nil {
                request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            }
        }
        if let maxTime { request.timeoutInterval = maxTime }
        return request
    }

    /// Parses `Name: value` (spaces around the value are dropped). Returns nil when there is no colon
    /// or no name.
    static func parseHeader(_ text: String) -> Header? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let name = text[..<colon].trimmingCharacters(in: .whitespaces)
        let value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, !name.contains(where: { $0.isWhitespace }) else { return nil }
        return Header(name: name, value: value)
    }

    /// Reads a `-d` argument: `@FILE` is the file's bytes (`@-` is standard input), anything else is sent
    /// as UTF-8 text.
    static func readBody(_ argument: String) throws(ToolFailure) -> Data {
        guard argument.hasPrefix("@") else { return Data(argument.utf8) }
        let path = String(argument.dropFirst())
        if path == "-" {
            return FileHandle.standardInput.readDataToEndOfFile()
        }
        let url = URL(fileURLWithPath: path)
        do {
            return try Data(contentsOf: url)
        } catch {
            let code = (error as NSError).code
            let permission = code == NSFileReadNoPermissionError
            throw ToolFailure(
                permission ? .noPermissionsToReadFile : .fileDoesNotExist,
                "cannot read -d file \(path)", url: url)
        }
    }
}
