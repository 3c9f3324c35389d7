import Foundation

/// A TLS cipher suite, as reported by `URLSessionTaskTransactionMetrics.negotiatedTLSCipherSuite`.
/// Raw values are the IANA TLS cipher suite numbers.
public enum tls_ciphersuite_t: UInt16, Sendable {

    /// TLS 1.3: AES-128 in GCM mode with SHA-256 (0x1301).
    case AES_128_GCM_SHA256 = 0x1301

    /// TLS 1.3: AES-256 in GCM mode with SHA-384 (0x1302).
    case AES_256_GCM_SHA384 = 0x1302

    /// TLS 1.3: ChaCha20-Poly1305 with SHA-256 (0x1303).
    case CHACHA20_POLY1305_SHA256 = 0x1303

    /// ECDHE key exchange, ECDSA signatures, 3DES-EDE in CBC mode, SHA-1 (0xC008).
    case ECDHE_ECDSA_WITH_3DES_EDE_CBC_SHA = 0xC008

    /// ECDHE key exchange, ECDSA signatures, AES-128 in CBC mode, SHA-1 (0xC009).
    case ECDHE_ECDSA_WITH_AES_128_CBC_SHA = 0xC009

    /// ECDHE key exchange, ECDSA signatures, AES-128 in CBC mode, SHA-256 (0xC023).
    case ECDHE_ECDSA_WITH_AES_128_CBC_SHA256 = 0xC023

    /// ECDHE key exchange, ECDSA signatures, AES-128 in GCM mode, SHA-256 (0xC02B).
    case ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 = 0xC02B

    /// ECDHE key exchange, ECDSA signatures, AES-256 in CBC mode, SHA-1 (0xC00A).
    case ECDHE_ECDSA_WITH_AES_256_CBC_SHA = 0xC00A

    /// ECDHE key exchange, ECDSA signatures, AES-256 in CBC mode, SHA-384 (0xC024).
    case ECDHE_ECDSA_WITH_AES_256_CBC_SHA384 = 0xC024

    /// ECDHE key exchange, ECDSA signatures, AES-256 in GCM mode, SHA-384 (0xC02C).
    case ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 = 0xC02C

    /// ECDHE key exchange, ECDSA signatures, ChaCha20-Poly1305, SHA-256 (0xCCA9).
    case ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 = 0xCCA9

    /// ECDHE key exchange, RSA signatures, 3DES-EDE in CBC mode, SHA-1 (0xC012).
    case ECDHE_RSA_WITH_3DES_EDE_CBC_SHA = 0xC012

    /// ECDHE key exchange, RSA signatures, AES-128 in CBC mode, SHA-1 (0xC013).
    case ECDHE_RSA_WITH_AES_128_CBC_SHA = 0xC013

    /// ECDHE key exchange, RSA signatures, AES-128 in CBC mode, SHA-256 (0xC027).
    case ECDHE_RSA_WITH_AES_128_CBC_SHA256 = 0xC027

    /// ECDHE key exchange, RSA signatures, AES-128 in GCM mode, SHA-256 (0xC02F).
    case ECDHE_RSA_WITH_AES_128_GCM_SHA256 = 0xC02F

    /// ECDHE key exchange, RSA signatures, AES-256 in CBC mode, SHA-1 (0xC014).
    case ECDHE_RSA_WITH_AES_256_CBC_SHA = 0xC014

    /// ECDHE key exchange, RSA signatures, AES-256 in CBC mode, SHA-384 (0xC028).
    case ECDHE_RSA_WITH_AES_256_CBC_SHA384 = 0xC028

    /// ECDHE key exchange, RSA signatures, AES-256 in GCM mode, SHA-384 (0xC030).
    case ECDHE_RSA_WITH_AES_256_GCM_SHA384 = 0xC030

    /// ECDHE key exchange, RSA signatures, ChaCha20-Poly1305, SHA-256 (0xCCA8).
    case ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 = 0xCCA8

    /// RSA key exchange, 3DES-EDE in CBC mode, SHA-1 (0x000A).
    case RSA_WITH_3DES_EDE_CBC_SHA = 0x000A

    /// RSA key exchange, AES-128 in CBC mode, SHA-1 (0x002F).
    case RSA_WITH_AES_128_CBC_SHA = 0x002F

    /// RSA key exchange, AES-128 in CBC mode, SHA-256 (0x003C).
    case RSA_WITH_AES_128_CBC_SHA256 = 0x003C

    /// RSA key exchange, AES-128 in GCM mode, SHA-256 (0x009C).
    case RSA_WITH_AES_128_GCM_SHA256 = 0x009C

    /// RSA key exchange, AES-256 in CBC mode, SHA-1 (0x0035).
    case RSA_WITH_AES_256_CBC_SHA = 0x0035

    /// RSA key exchange, AES-256 in CBC mode, SHA-256 (0x003D).
    case RSA_WITH_AES_256_CBC_SHA256 = 0x003D

    /// RSA key exchange, AES-256 in GCM mode, SHA-384 (0x009D).
    case RSA_WITH_AES_256_GCM_SHA384 = 0x009D
}

/// A TLS or DTLS protocol version, as reported by
/// `URLSessionTaskTransactionMetrics.negotiatedTLSProtocolVersion`. Raw values are the version
/// numbers sent on the wire.
public enum tls_protocol_version_t: UInt16, Sendable {

    /// TLS 1.0 (0x0301).
    case TLSv10 = 0x0301

    /// TLS 1.1 (0x0302).
    case TLSv11 = 0x0302

    /// TLS 1.2 (0x0303).
    case TLSv12 = 0x0303

    /// TLS 1.3 (0x0304).
    case TLSv13 = 0x0304

    /// DTLS 1.0 (0xFEFF).
    case DTLSv10 = 0xFEFF

    /// DTLS 1.2 (0xFEFD).
    case DTLSv12 = 0xFEFD
}
