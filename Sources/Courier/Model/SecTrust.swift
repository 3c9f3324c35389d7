import Foundation

/// The certificate chain a TLS server presented and why it was not trusted: Courier's stand-in for
/// the Security framework's trust object, which Linux does not have.
///
/// A server-trust challenge (`NSURLAuthenticationMethodServerTrust`) carries one in its protection
/// space's `serverTrust`. To accept the server anyway — a self-signed test server, or a certificate
/// the app pins — answer the challenge with `.useCredential` and `URLCredential(trust:)`; Courier then
/// accepts exactly this server's public key for the request.
public final class SecTrust: @unchecked Sendable {
    /// The certificates in DER form, the server's own first.
    public let certificates: [Data]
    /// The host name that was being verified.
    public let host: String
    /// Why verification failed, in the TLS library's words.
    public let failureReason: String?

    /// A trust object for `certificates` (DER, leaf first) presented by `host`.
    public init(certificates: [Data], host: String, failureReason: String?) {
        self.certificates = certificates
        self.host = host
        self.failureReason = failureReason
    }
}
