internal import CCurl
internal import CSSH2
import Foundation

/// The versions of Courier and of the C libraries this process runs it with, for `courier --version`.
///
/// Package-level, not public API: FoundationNetworking has no counterpart, and only the tool in this
/// package prints them.
package enum LibraryVersions {
    /// Courier's own version.
    package static let courier = "0.1.0"

    /// The libcurl version, such as `"7.88.1"`.
    package static var libcurl: String {
        guard let info = curl_version_info(CURLVERSION_FIRST) else { return "unknown" }
        return info.pointee.version.map { String(cString: $0) } ?? "unknown"
    }

    /// The TLS library libcurl uses, as libcurl names it (`"OpenSSL/3.0.19"`), or nil without TLS.
    package static var tls: String? {
        guard let info = curl_version_info(CURLVERSION_FIRST) else { return nil }
        return info.pointee.ssl_version.map { String(cString: $0) }
    }

    /// libcurl's full version line (`"libcurl/7.88.1 OpenSSL/3.0.19 zlib/1.2.13 …"`).
    package static var libcurlDescription: String { CurlGlobal.version }

    /// The version of the libssh2 the process runs with, such as `"1.10.0"`.
    package static var libssh2: String { SSHLibrary.version }

    /// The schemes Courier serves itself, sorted.
    package static var builtInSchemes: [String] { BuiltInScheme.allCases.map(\.rawValue).sorted() }
}
