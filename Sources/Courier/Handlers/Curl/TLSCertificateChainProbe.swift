internal import CCurl
import Foundation

/// Fetches the certificate chain a TLS server presents, without trusting it: a handshake-only
/// connection with verification off and certificate collection on. Used to fill a server-trust
/// challenge after verification failed. Blocking: call it off the loop thread.
enum TLSCertificateChainProbe {
    /// The chain (DER, leaf first), or an empty array when the server cannot be reached.
    /// `explicitFTPTLS`: an `ftp://` server reached with `AUTH TLS` (the login after the handshake may
    /// fail; the chain is read anyway). `proxy`: the `CURLOPT_PROXY` value the load itself uses
    /// (`nil`: libcurl's default, the environment), so the probe reaches the server the same way;
    /// `proxyCredential`: what the load answers the proxy with.
    static func chain(for url: URL, timeout: TimeInterval, explicitFTPTLS: Bool = false, proxy: String? = nil,
                      proxyCredential: ProxyCredential? = nil) -> [Data] {
        guard CurlGlobal.isInitialized, let easy = curl_easy_init() else { return [] }
        defer { curl_easy_cleanup(easy) }
        var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        components?.path = "/"
        components?.query = nil
        components?.fragment = nil
        guard let address = components?.string else { return [] }
        let ok = address.withCString { courier_easy_setopt_string(easy, CURLOPT_URL, $0) } == CURLE_OK
        guard ok else { return [] }
        _ = courier_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        _ = courier_easy_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 0)
        _ = courier_easy_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 0)
        _ = courier_easy_setopt_long(easy, CURLOPT_CERTINFO, 1)
        _ = courier_easy_setopt_long(easy, CURLOPT_CONNECT_ONLY, 1)
        _ = courier_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, Int(max(1, min(timeout, 60)) * 1000))
        if explicitFTPTLS { _ = courier_easy_setopt_long(easy, CURLOPT_USE_SSL, Int(CURLUSESSL_ALL.rawValue)) }
        if let proxy {
            let set = proxy.withCString { courier_easy_setopt_string(easy, CURLOPT_PROXY, $0) } == CURLE_OK
            guard set else { return [] }
        }
        if let proxyCredential {
            _ = proxyCredential.user.withCString { courier_easy_setopt_string(easy, CURLOPT_PROXYUSERNAME, $0) }
            _ = proxyCredential.password.withCString { courier_easy_setopt_string(easy, CURLOPT_PROXYPASSWORD, $0) }
            _ = courier_easy_setopt_long(easy, CURLOPT_PROXYAUTH, proxyCredential.mask)
        }
        // A server that asks for a client certificate may end the handshake without one (TLS 1.2)
        // before libcurl collects the chain: take it when the server asks.
        let certificateRequest = TLSClientCertificateRequest(capturingChain: true)
        certificateRequest.install(on: easy)
        let result = curl_easy_perform(easy)
        if result != CURLE_OK, certificateRequest.wasRequested { return certificateRequest.capturedChain }
        // An FTP server may refuse the probe's anonymous login after the handshake: the chain is there.
        guard result == CURLE_OK || url.scheme?.lowercased().hasPrefix("ftp") == true else { return [] }
        let count = courier_certinfo_count(easy)
        return (0..<Int(max(count, 0))).compactMap { index in
            guard let pem = courier_certinfo_pem(easy, Int32(index)) else { return nil }
            return derFromPEM(String(cString: pem))
        }
    }

    /// The DER bytes of a PEM certificate.
    static func derFromPEM(_ pem: String) -> Data? {
        let body = pem.split(whereSeparator: \.isNewline)
            .filter { !$0.hasPrefix("-----") }
            .joined()
        return Data(base64Encoded: body)
    }
}
