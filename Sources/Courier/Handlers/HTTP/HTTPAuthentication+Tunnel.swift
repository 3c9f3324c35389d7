internal import CCurl
import Foundation

extension HTTPAuthentication {
    /// The 407 a proxy answered to libcurl's CONNECT on `transfer`, as a response whose
    /// `Proxy-Authenticate` lists the schemes the proxy offered; `nil` when the tunnel was not
    /// refused with 407 or no scheme Courier knows was offered. libcurl keeps the proxy's answer to
    /// itself (`CURLOPT_SUPPRESS_CONNECT_HEADERS`), so the schemes come from
    /// `CURLINFO_PROXYAUTH_AVAIL` and the realm is not known.
    static func tunnelRefusal(of transfer: CurlTransfer, url: URL) -> HTTPURLResponse? {
        guard transfer.info(long: CURLINFO_HTTP_CONNECTCODE) == 407 else { return nil }
        let available = transfer.info(long: CURLINFO_PROXYAUTH_AVAIL) ?? 0
        let schemes = [(courier_auth_negotiate, "Negotiate"), (courier_auth_ntlm, "NTLM"), (courier_auth_digest, "Digest"),
                       (courier_auth_basic, "Basic")].filter { available & $0.0 != 0 }.map(\.1)
        guard !schemes.isEmpty else { return nil }
        return HTTPURLResponse(url: url, statusCode: 407, httpVersion: "HTTP/1.1",
                               fields: HTTPHeaderFields(["Proxy-Authenticate": schemes.joined(separator: ", ")]))
    }
}
