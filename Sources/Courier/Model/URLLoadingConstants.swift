import Foundation

// Public string and number constants of the URL Loading System, with Apple's values.

// MARK: - Authentication methods (URLProtectionSpace.authenticationMethod)

/// The protocol's default authentication method (for HTTP, Basic).
public let NSURLAuthenticationMethodDefault: String = "NSURLAuthenticationMethodDefault"

/// Authentication through an HTML form; the loading system never answers it itself.
public let NSURLAuthenticationMethodHTMLForm: String = "NSURLAuthenticationMethodHTMLForm"

/// HTTP Basic authentication (RFC 7617).
public let NSURLAuthenticationMethodHTTPBasic: String = "NSURLAuthenticationMethodHTTPBasic"

/// HTTP Digest authentication (RFC 7616).
public let NSURLAuthenticationMethodHTTPDigest: String = "NSURLAuthenticationMethodHTTPDigest"

/// NTLM authentication.
public let NSURLAuthenticationMethodNTLM: String = "NSURLAuthenticationMethodNTLM"

/// Negotiate (Kerberos or NTLM) authentication.
public let NSURLAuthenticationMethodNegotiate: String = "NSURLAuthenticationMethodNegotiate"

/// TLS client-certificate authentication: the server asks for a client certificate.
public let NSURLAuthenticationMethodClientCertificate: String = "NSURLAuthenticationMethodClientCertificate"

/// TLS server-trust evaluation: the client decides whether to trust the server's certificate.
public let NSURLAuthenticationMethodServerTrust: String = "NSURLAuthenticationMethodServerTrust"

/// SSH host-key verification (Courier's `sftp:` handler): the server's host key is not in the known-hosts
/// files (a changed or revoked key is refused without a challenge). The protection space's realm names
/// the key (``URLProtectionSpace/sshHostKeyType`` and ``URLProtectionSpace/sshHostKeyFingerprint``);
/// answer `.useCredential` with `URLCredential(sshHostKeyFingerprint:)` carrying that fingerprint to
/// accept the key for the rest of the session. Every other answer — a `nil` or other credential,
/// `.performDefaultHandling`, `.rejectProtectionSpace` — refuses it; `.cancelAuthenticationChallenge`
/// cancels the task.
public let NSURLAuthenticationMethodSSHHostKey: String = "NSURLAuthenticationMethodSSHHostKey"

// MARK: - Credential storage

/// Option key for `URLCredentialStorage.remove(_:for:options:)`: also remove credentials synchronised
/// to other devices. Courier has no synchronisation; the key is accepted and has no extra effect.
public let NSURLCredentialStorageRemoveSynchronizableCredentials: String = "NSURLCredentialStorageRemoveSynchronizableCredentials"

// MARK: - Protection space protocols and proxy types

/// The protection-space protocol for HTTP.
public let NSURLProtectionSpaceHTTP: String = "http"

/// The protection-space protocol for HTTPS.
public let NSURLProtectionSpaceHTTPS: String = "https"

/// The protection-space protocol for FTP.
@available(swift, deprecated: 6.1, message: "FTP is deprecated")
public let NSURLProtectionSpaceFTP: String = "ftp"

/// The proxy type of an HTTP proxy.
public let NSURLProtectionSpaceHTTPProxy: String = "http"

/// The proxy type of an HTTPS proxy.
public let NSURLProtectionSpaceHTTPSProxy: String = "https"

/// The proxy type of an FTP proxy.
@available(swift, deprecated: 6.1, message: "FTP is deprecated")
public let NSURLProtectionSpaceFTPProxy: String = "ftp"

/// The proxy type of a SOCKS proxy.
public let NSURLProtectionSpaceSOCKSProxy: String = "SOCKS"

// MARK: - Sessions

/// The byte count reported when a transfer's size is not known: `-1`.
public let NSURLSessionTransferSizeUnknown: Int64 = -1

/// The `userInfo` key of a download error under which the resume data (`Data`) is stored; see
/// `URLError.downloadTaskResumeData`.
public let URLSessionDownloadTaskResumeData: String = "NSURLSessionDownloadTaskResumeData"
