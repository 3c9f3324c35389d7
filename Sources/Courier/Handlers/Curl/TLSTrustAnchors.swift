internal import CCurl
import Foundation

/// Certificate authorities TLS servers (https, ftps, an https proxy) are verified against in
/// place of the system's, named by the process environment as Linux programs expect:
///
/// - `SSL_CERT_FILE`: a PEM file of trusted certificates, replacing the system bundle
///   (`/etc/ssl/certs/ca-certificates.crt`) — OpenSSL's own variable, also honoured by curl, Go
///   and Python;
/// - `SSL_CERT_DIR`: a directory of hashed certificates (`c_rehash`), replacing `/etc/ssl/certs`;
/// - `URLSessionCertificateAuthorityInfoFile`: FoundationNetworking's name for the file (it reads
///   it on Android only), so code moved from there keeps working; it wins over `SSL_CERT_FILE`.
///
/// Apple's platforms add trust anchors through the Security framework, which has no counterpart
/// here; a delegate can still accept any server in a server-trust challenge. A file that cannot be
/// read fails the load with `secureConnectionFailed` and libcurl's description of the problem.
struct TLSTrustAnchors: Sendable, Equatable {
    /// A PEM file of trusted certificates (`CURLOPT_CAINFO`); `nil`: the system bundle.
    var file: String?
    /// A directory of hashed certificates (`CURLOPT_CAPATH`); `nil`: the system directory.
    var directory: String?

    /// The anchors `environment` names, or `nil` when it names none (empty values count as unset).
    static func from(environment: [String: String]) -> TLSTrustAnchors? {
        func value(_ name: String) -> String? {
            guard let value = environment[name], !value.isEmpty else { return nil }
            return value
        }
        let anchors = TLSTrustAnchors(file: value("URLSessionCertificateAuthorityInfoFile") ?? value("SSL_CERT_FILE"),
                                      directory: value("SSL_CERT_DIR"))
        return anchors.file == nil && anchors.directory == nil ? nil : anchors
    }

    /// The anchors this process's environment names, read when a session is created.
    static var process: TLSTrustAnchors? { from(environment: ProcessInfo.processInfo.environment) }

    /// Makes `transfer` verify servers, and an https proxy, against these anchors.
    func apply(to transfer: CurlTransfer) {
        if let file {
            transfer.set(CURLOPT_CAINFO, file)
            transfer.set(CURLOPT_PROXY_CAINFO, file)
        }
        if let directory {
            transfer.set(CURLOPT_CAPATH, directory)
            transfer.set(CURLOPT_PROXY_CAPATH, directory)
        }
    }
}
