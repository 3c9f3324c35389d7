internal import CCurl

/// libcurl's process-wide initialisation, done once before the first handle is made.
enum CurlGlobal {
    /// Whether `curl_global_init` succeeded (OpenSSL is initialised first, without its exit
    /// handler: ``OpenSSLProcessState``).
    static let isInitialized: Bool = {
        _ = OpenSSLProcessState.isInitialized
        return curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK
    }()

    /// The libcurl version string, e.g. "libcurl/7.88.1 OpenSSL/3.0.11 …".
    static var version: String { String(cString: curl_version()) }
}
