internal import CCurl
import Foundation

/// Applies `connectionProxyDictionary` to a transfer, with Apple's keys: `HTTPEnable`/`HTTPProxy`/
/// `HTTPPort` for `http:` URLs, `HTTPSEnable`/`HTTPSProxy`/`HTTPSPort` for `https:` URLs (tunnelled
/// with CONNECT), and `SOCKSEnable`/`SOCKSProxy`/`SOCKSPort` (SOCKS5, names resolved by the proxy)
/// for either when the scheme's own proxy is not enabled.
///
/// Without a dictionary (`nil`, the default) libcurl follows the usual environment variables
/// (`http_proxy`, `https_proxy`, `all_proxy`, `no_proxy`) — Linux's system settings. A dictionary,
/// even an empty one, replaces them, as on Apple's platforms: a URL it names no proxy for goes direct.
enum HTTPProxyConfiguration {
    /// A proxy for one URL.
    struct Proxy: Equatable {
        /// The host as the dictionary names it.
        var host: String
        var port: Int
        /// `http` or `socks5h`.
        var scheme: String

        /// The proxy as libcurl's `CURLOPT_PROXY` takes it.
        var curlValue: String {
            let literal = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
            return "\(scheme)://\(literal):\(port)"
        }
    }

    /// The proxy `dictionary` names for `url`, if any.
    static func proxy(for url: URL, in dictionary: [AnyHashable: Any]) -> Proxy? {
        func string(_ key: String) -> String? {
            let value = (dictionary[key] as? String) ?? (dictionary[key] as? NSString).map { String(describing: $0) }
            return value?.isEmpty == false ? value : nil
        }
        func integer(_ key: String) -> Int? {
            (dictionary[key] as? Int) ?? (dictionary[key] as? NSNumber)?.intValue ?? string(key).flatMap { Int($0) }
        }
        func enabled(_ key: String) -> Bool {
            (dictionary[key] as? Bool) ?? (integer(key).map { $0 != 0 } ?? false)
        }
        switch url.scheme?.lowercased() {
        case "https":
            if enabled("HTTPSEnable"), let host = string("HTTPSProxy") {
                return Proxy(host: host, port: integer("HTTPSPort") ?? 443, scheme: "http")
            }
        case "http":
            if enabled("HTTPEnable"), let host = string("HTTPProxy") {
                return Proxy(host: host, port: integer("HTTPPort") ?? 80, scheme: "http")
            }
        default:
            break
        }
        if enabled("SOCKSEnable"), let host = string("SOCKSProxy") {
            return Proxy(host: host, port: integer("SOCKSPort") ?? 1080, scheme: "socks5h")
        }
        return nil
    }

    /// The `CURLOPT_PROXY` value for `url`: `nil` to leave libcurl to the environment (no
    /// dictionary), `""` for a direct connection, or the proxy.
    static func curlProxy(for url: URL, dictionary: [AnyHashable: Any]?) -> String? {
        guard let dictionary else { return nil }
        return proxy(for: url, in: dictionary)?.curlValue ?? ""
    }

    /// Sets `transfer`'s proxy for `url` from `dictionary`, leaving libcurl to the environment without one.
    static func apply(_ dictionary: [AnyHashable: Any]?, for url: URL, to transfer: CurlTransfer) {
        guard let value = curlProxy(for: url, dictionary: dictionary) else { return }
        transfer.set(CURLOPT_PROXY, value)
    }

    /// Sets `transfer`'s proxy for `url` from `dictionary`. Where `environment` shows that libcurl
    /// would find no proxy variable (or no exclusion list) in the environment, says so, so that
    /// libcurl does not read the environment for every transfer (``HTTPProxyEnvironment``).
    static func apply(_ dictionary: [AnyHashable: Any]?, for url: URL, environment: HTTPProxyEnvironment,
                      to transfer: CurlTransfer) {
        if !environment.namesExclusions { transfer.set(CURLOPT_NOPROXY, "") }
        if let value = curlProxy(for: url, dictionary: dictionary) {
            transfer.set(CURLOPT_PROXY, value)
        } else if !environment.namesProxy {
            transfer.set(CURLOPT_PROXY, "")
        }
    }
}
