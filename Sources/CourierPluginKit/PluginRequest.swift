import Foundation
internal import CourierPluginABI

/// The request a plugin handler loads: a Swift copy of the host's `courier_request`.
public struct PluginRequest: Sendable {
    /// The URL to load.
    public var url: URL
    /// The method: `GET`, `HEAD`, or another for schemes that can write.
    public var httpMethod: String
    /// The header fields the app set.
    public var headerFields: [String: String]
    /// The body, for methods that send one.
    public var httpBody: Data?
    /// The idle timeout Courier enforces (the host stops the handler when it passes).
    public var timeoutInterval: TimeInterval
    /// When resuming a download: the byte offset to continue from (only for schemes with the
    /// `resume` capability).
    public var resumeOffset: Int64?
    /// When resuming: the validator the resource had when the partial download was made.
    public var resumeValidator: String?

    /// A request, for tests of a handler outside a host.
    public init(url: URL, httpMethod: String = "GET", headerFields: [String: String] = [:], httpBody: Data? = nil,
                timeoutInterval: TimeInterval = 60, resumeOffset: Int64? = nil, resumeValidator: String? = nil) {
        self.url = url
        self.httpMethod = httpMethod
        self.headerFields = headerFields
        self.httpBody = httpBody
        self.timeoutInterval = timeoutInterval
        self.resumeOffset = resumeOffset
        self.resumeValidator = resumeValidator
    }

    /// Copies the host's request; nil when its URL does not parse.
    init?(_ request: UnsafePointer<courier_request>) {
        let fields = request.pointee
        guard let urlText = fields.url.map({ String(cString: $0) }), let url = URL(string: urlText) else { return nil }
        self.url = url
        httpMethod = fields.method.map { String(cString: $0) } ?? "GET"
        var headers: [String: String] = [:]
        if let list = fields.headers {
            for index in 0..<fields.header_count {
                guard let name = list[index].name else { continue }
                headers[String(cString: name)] = list[index].value.map { String(cString: $0) } ?? ""
            }
        }
        headerFields = headers
        if let body = fields.body, fields.body_length > 0 {
            httpBody = Data(bytes: body, count: fields.body_length)
        }
        timeoutInterval = fields.timeout_seconds
        resumeOffset = fields.resume_offset > 0 ? fields.resume_offset : nil
        resumeValidator = fields.resume_validator.map { String(cString: $0) }
    }
}
