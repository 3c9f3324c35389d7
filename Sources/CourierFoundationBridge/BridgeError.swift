import Foundation

/// The errors the bridge makes itself (every other error is Courier's `URLError`, passed on as is).
enum BridgeError {
    /// `URLError(.unsupportedURL)` with `failingURL` set and `description` as its message.
    static func unsupported(_ url: URL?, _ description: String) -> URLError {
        var info: [String: Any] = [NSLocalizedDescriptionKey: description]
        if let url {
            info[NSURLErrorFailingURLErrorKey] = url
            // NSURLErrorFailingURLStringErrorKey's value, spelled out: the constant is deprecated.
            info["NSErrorFailingURLStringKey"] = url.absoluteString
        }
        return URLError(.unsupportedURL, userInfo: info)
    }
}
