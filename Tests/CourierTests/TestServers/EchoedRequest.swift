import Foundation

/// The decoded JSON of an ``FaultServer/Route/echo`` answer.
struct EchoedRequest: Sendable {
    var method: String
    var target: String
    var headers: [String: String]
    var body: Data
    var bodyLength: Int

    init(json: Data) throws {
        guard let object = try JSONSerialization.jsonObject(with: json) as? [String: Any] else {
            throw FaultServerError("the echo is not a JSON object: \(String(decoding: json.prefix(200), as: UTF8.self))")
        }
        method = object["method"] as? String ?? ""
        target = object["target"] as? String ?? ""
        headers = object["headers"] as? [String: String] ?? [:]
        body = (object["body"] as? String).flatMap { Data(base64Encoded: $0) } ?? Data()
        bodyLength = object["bodyLength"] as? Int ?? -1
    }

    /// The value of header `name` (any case).
    func header(_ name: String) -> String? { headers[name.lowercased()] }
}
