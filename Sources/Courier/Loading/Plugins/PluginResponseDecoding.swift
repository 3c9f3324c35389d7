import Foundation
internal import CourierPluginABI

/// Turns a plugin's `courier_response` into a `URLResponse` (status 0) or an `HTTPURLResponse`
/// (status 100…599), checking every field.
enum PluginResponseDecoding {
    /// The response, or what is wrong with it (completing "The plugin X …").
    static func response(_ pointer: UnsafePointer<courier_response>, requestURL: URL) -> Result<URLResponse, PluginViolation> {
        let size = Int(UnsafeRawPointer(pointer).load(as: UInt32.self))
        guard size >= MemoryLayout<courier_response>.size else {
            return .failure(PluginViolation("reported a response whose struct_size (\(size)) is too small"))
        }
        let fields = pointer.pointee
        var url = requestURL
        if let text = PluginABI.string(fields.url), !text.isEmpty {
            guard let parsed = URL(string: text), parsed.scheme != nil else {
                return .failure(PluginViolation("reported a response with an invalid URL"))
            }
            url = parsed
        }
        let mimeType = PluginABI.string(fields.mime_type).flatMap { $0.isEmpty ? nil : $0.lowercased() }
        let encoding = PluginABI.string(fields.text_encoding).flatMap { $0.isEmpty ? nil : $0 }
        let length = fields.expected_length >= 0 ? fields.expected_length : -1
        let status = Int(fields.status_code)
        if status == 0 {
            return .success(URLResponse(url: url, mimeType: mimeType, expectedContentLength: Int(clamping: length),
                                        textEncodingName: encoding))
        }
        guard (100...599).contains(status) else {
            return .failure(PluginViolation("reported the invalid status code \(status)"))
        }
        var headers = HTTPHeaderFields()
        let count = fields.header_count
        if count > 0 {
            guard count <= PluginABI.maximumHeaderCount else {
                return .failure(PluginViolation("reported more than \(PluginABI.maximumHeaderCount) header fields"))
            }
            guard let list = fields.headers else { return .failure(PluginViolation("reported header fields at a NULL pointer")) }
            for index in 0..<count {
                guard let name = PluginABI.string(list[index].name), !name.isEmpty,
                      !name.utf8.contains(where: { $0 <= 0x20 || $0 == UInt8(ascii: ":") || $0 >= 0x7F }) else {
                    return .failure(PluginViolation("reported a header field with an invalid name"))
                }
                headers.add(PluginABI.string(list[index].value) ?? "", for: name)
            }
        }
        if !headers.contains("Content-Type"), let mimeType {
            headers.set(encoding.map { "\(mimeType); charset=\($0)" } ?? mimeType, for: "Content-Type")
        }
        if !headers.contains("Content-Length"), length >= 0 {
            headers.set(String(length), for: "Content-Length")
        }
        return .success(HTTPURLResponse(url: url, statusCode: status, httpVersion: nil, fields: headers))
    }
}

/// How a plugin broke the contract, completing "The plugin X …".
struct PluginViolation: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
