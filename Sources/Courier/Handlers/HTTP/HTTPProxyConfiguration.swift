internal import CCurl
import Foundation

/// Applies `connectionProxyDictionary` to a transfer. Without one, libcurl follows the usual
/// environment variables (`http_proxy`, `https_proxy`, `all_proxy`, `no_proxy`).
enum HTTPProxyConfiguration {
    static func apply(_ dictionary: [AnyHashable: Any]?, to transfer: CurlTransfer) {
        guard let dictionary, !dictionary.isEmpty else { return }
        func string(_ key: String) -> String? {
            (dictionary[key] as? String) ?? (dictionary[key] as? NSString).map { String(describing: $0) }
        }
        func integer(_ key: String) -> Int? {
            (dictionary[key] as? Int) ?? (dictionary[key] as? NSNumber)?.intValue ?? string(key).flatMap { Int($0) }
        }
        func enabled(_ key: String) -> Bool {
            (dictionary[key] as? Bool) ?? (integer(key).map { $0 != 0 } ?? false)
        }
        if enabled("SOCKSEnable"), let host = string("SOCKSProxy") {
            transfer.set(CURLOPT_PROXY, "socks5h://\(host):\(integer("SOCKSPort") ?? 1080)")
        } else if enabled("HTTPSEnable"), let host = string("HTTPSProxy") {
            transfer.set(CURLOPT_PROXY, "http://\(host):\(integer("HTTPSPort") ?? 443)")
        } else if enabled("HTTPEnable"), let host = string("HTTPProxy") {
            transfer.set(CURLOPT_PROXY, "http://\(host):\(integer("HTTPPort") ?? 80)")
        }
    }
}
