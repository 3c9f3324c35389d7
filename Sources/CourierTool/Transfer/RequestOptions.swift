import Foundation
import Courier

/// The request-shaping options (`-X`, `-H`, `-d`, `-T`, `-I`, `-b`, `-m`) and how they turn a URL into
/// a `URLRequest`.
struct RequestOptions: Sendable {
    /// One `-H "Name: value"` header.
    struct Header: Sendable, Equatable {
        let name: String
        let value: String
    }

    /// Where a request body comes from.
    enum Body: Sendable, Equatable {
        /// Bytes given on the command line or read from standard input.
        case data(Data)
        /// A file streamed from disk by an upload task (`-d @FILE`, `-T FILE`): never read whole.
        case file(URL)
    }

    /// `-X/--request`; nil means GET, POST with `-d`, PUT with `-T`, HEAD with `-I`.
    var method: String?
    /// `-H/--header`, in command-line order; a later one with the same name replaces an earlier one.
    var headers: [Header] = []
    /// `-d/--data` or `-T/--upload-file`.
    var body: Body?
    /// Whether the body came from `-T` (sent as PUT, without a form content type).
    var isUpload = false
    /// `-I/--head`.
    var headOnly = false
    /// `-b NAME=VALUE`: a `Cookie` header sent as given.
    var cookieHeader: String?
    /// `-m/--max-time`.
    var maxTime: TimeInterval?

    /// The method the request is sent with.
    var effectiveMethod: String {
        if let method { return method }
        if headOnly { return "HEAD" }
        if body == nil { return "GET" }
        return isUpload ? "PUT" : "POST"
    }

    /// Builds the request for `url`. A `-d` body without a `Content-Type` header is sent as
    /// `application/x-www-form-urlencoded`, as curl does. A `.file` body is not set here: the
    /// caller gives it to an upload task.
    func makeRequest(for url: URL) -> URLRequest {
        var request = URLRequest(url: url)
        request.httpMethod = effectiveMethod
        if let cookieHeader { request.setValue(cookieHeader, forHTTPHeaderField: "Cookie") }
        for header in headers {
            request.setValue(header.value, forHTTPHeaderField: header.name)
        }
        if let body {
            if case .data(let data) = body { request.httpBody = data }
            if !isUpload, request.value(forHTTPHeaderField: "Content-Type") == nil {
                request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            }
        }
        if let maxTime { request.timeoutInterval = maxTime }
        return request
    }

    /// The file an upload task streams, if the body is one.
    var bodyFile: URL? {
        if case .file(let url) = body { url } else { nil }
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

    /// Reads a `-d` argument: `@FILE` is the file, streamed later (checked readable now); `@-` is
    /// standard input, read now; anything else is sent as UTF-8 text.
    static func readBody(_ argument: String) throws(ToolFailure) -> Body {
        guard argument.hasPrefix("@") else { return .data(Data(argument.utf8)) }
        let path = String(argument.dropFirst())
        if path == "-" {
            return .data(FileHandle.standardInput.readDataToEndOfFile())
        }
        return .file(try readableFile(path, option: "-d"))
    }

    /// The regular file at `path`, checked readable, for `-d @FILE` and `-T FILE`.
    static func readableFile(_ path: String, option: String) throws(ToolFailure) -> URL {
        let url = URL(fileURLWithPath: path)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ToolFailure(.fileDoesNotExist, "cannot read \(option) file \(path)", url: url)
        }
        guard !isDirectory.boolValue else {
            throw ToolFailure(.fileIsDirectory, "\(option) \(path) is a directory", url: url)
        }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw ToolFailure(.noPermissionsToReadFile, "cannot read \(option) file \(path)", url: url)
        }
        return url
    }
}
