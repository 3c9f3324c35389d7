internal import CCurl
import Foundation

/// Client certificates for HTTPS: recognising that a server asked for one, and presenting the
/// files of a `URLCredential(clientCertificateURL:…)` on the next attempt.
enum HTTPClientCertificate {
    /// Whether a failed handshake looks like the server wanted a client certificate.
    static func serverRequiresCertificate(result: CURLcode, detail: String?) -> Bool {
        guard let text = detail?.lowercased() else { return false }
        let tlsFailure = result == CURLE_SSL_CONNECT_ERROR || result == CURLE_RECV_ERROR || result == CURLE_SEND_ERROR
        return tlsFailure && (text.contains("certificate required") || text.contains("alert handshake failure")
                              || text.contains("bad certificate") || text.contains("peer did not return a certificate"))
    }

    /// Whether a failed handshake, after a certificate was presented, looks like the server refused
    /// it: the alerts a server sends about a client's certificate (an unknown or untrusted issuer, a
    /// bad, expired, revoked or unsupported certificate) or the ones it sends when it got none.
    static func serverRejectedCertificate(result: CURLcode, detail: String?) -> Bool {
        if serverRequiresCertificate(result: result, detail: detail) { return true }
        guard let text = detail?.lowercased() else { return false }
        let tlsFailure = result == CURLE_SSL_CONNECT_ERROR || result == CURLE_RECV_ERROR || result == CURLE_SEND_ERROR
        return tlsFailure && ["alert unknown ca", "alert certificate unknown", "alert unsupported certificate",
                              "alert certificate revoked", "alert certificate expired", "alert access denied"]
            .contains { text.contains($0) }
    }

    /// Sets the certificate options on `transfer`.
    static func apply(_ files: ClientCertificateFiles, to transfer: CurlTransfer) {
        transfer.set(CURLOPT_SSLCERT, files.certificate.path)
        transfer.set(CURLOPT_SSLCERTTYPE, files.isPKCS12 ? "P12" : "PEM")
        if let key = files.privateKey {
            transfer.set(CURLOPT_SSLKEY, key.path)
            transfer.set(CURLOPT_SSLKEYTYPE, "PEM")
        }
        if let passphrase = files.passphrase { transfer.set(CURLOPT_KEYPASSWD, passphrase) }
    }
}
