import Courier
import Foundation
import FoundationNetworking

/// The parts of a request the bridge carries between FoundationNetworking and Courier: URL, method,
/// header fields, body (data or stream), timeout, cache policy, cookie handling and main document
/// URL. Both `URLRequest` types have them under the same names. Courier's protocol properties
/// (`sftpResumesUpload`, …) have no FoundationNetworking counterpart and are not set.
protocol BridgedRequest {
    init(url: URL, cachePolicyRawValue: UInt, timeoutInterval: TimeInterval)
    var url: URL? { get }
    var cachePolicyRawValue: UInt { get }
    var timeoutInterval: TimeInterval { get }
    var httpMethod: String? { get set }
    var allHTTPHeaderFields: [String: String]? { get set }
    var httpBody: Data? { get set }
    var httpBodyStream: InputStream? { get set }
    var httpShouldHandleCookies: Bool { get set }
    var mainDocumentURL: URL? { get set }
}

extension BridgedRequest {
    /// A request of type `Other` with this one's URL and carried parts; nil when it has no URL.
    func converted<Other: BridgedRequest>(to: Other.Type = Other.self) -> Other? {
        guard let url else { return nil }
        var other = Other(url: url, cachePolicyRawValue: cachePolicyRawValue, timeoutInterval: timeoutInterval)
        other.httpMethod = httpMethod
        other.allHTTPHeaderFields = allHTTPHeaderFields
        if let httpBody {
            other.httpBody = httpBody
        } else if let httpBodyStream {
            other.httpBodyStream = httpBodyStream
        }
        other.httpShouldHandleCookies = httpShouldHandleCookies
        other.mainDocumentURL = mainDocumentURL
        return other
    }
}

extension FoundationNetworking.URLRequest: BridgedRequest {
    init(url: URL, cachePolicyRawValue: UInt, timeoutInterval: TimeInterval) {
        self.init(url: url, cachePolicy: CachePolicy(rawValue: cachePolicyRawValue) ?? .useProtocolCachePolicy,
                  timeoutInterval: timeoutInterval)
    }

    var cachePolicyRawValue: UInt { cachePolicy.rawValue }
}

extension Courier.URLRequest: BridgedRequest {
    init(url: URL, cachePolicyRawValue: UInt, timeoutInterval: TimeInterval) {
        self.init(url: url, cachePolicy: CachePolicy(rawValue: cachePolicyRawValue) ?? .useProtocolCachePolicy,
                  timeoutInterval: timeoutInterval)
    }

    var cachePolicyRawValue: UInt { cachePolicy.rawValue }
}
