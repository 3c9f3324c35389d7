#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Which of the proxy variables libcurl reads for every http(s) transfer this process's
/// environment sets, read once when a session is created.
///
/// Without `CURLOPT_PROXY`, libcurl looks up `no_proxy`/`NO_PROXY`, the scheme's `http_proxy` or
/// `https_proxy`/`HTTPS_PROXY`, then `all_proxy`/`ALL_PROXY` for each transfer: five or six
/// `getenv` calls, each copied and freed. When the environment names none of them, a direct
/// connection (`CURLOPT_PROXY` "") and an empty exclusion list (`CURLOPT_NOPROXY` "") are what
/// libcurl would conclude, so the transfer says so and libcurl reads nothing. A variable that is
/// set, even empty, leaves libcurl to read the environment as before.
struct HTTPProxyEnvironment: Sendable, Equatable {
    /// Some variable naming a proxy (`http_proxy`, `https_proxy`, `all_proxy`, any case libcurl reads) is set.
    var namesProxy: Bool
    /// `no_proxy` or `NO_PROXY` is set.
    var namesExclusions: Bool

    /// The variables libcurl may read to choose a proxy.
    static let proxyVariables = ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"]
    /// The variables libcurl reads for hosts that bypass the proxy.
    static let exclusionVariables = ["no_proxy", "NO_PROXY"]

    /// This process's environment, as it is now.
    static var process: HTTPProxyEnvironment {
        HTTPProxyEnvironment(namesProxy: proxyVariables.contains { getenv($0) != nil },
                             namesExclusions: exclusionVariables.contains { getenv($0) != nil })
    }
}
