internal import CCurl
import Foundation

/// Notices that a TLS server asks for a client certificate during the handshake (it sent a
/// CertificateRequest), whether or not it would go on without one: the moment Apple's URLSession
/// asks the delegate (`NSURLAuthenticationMethodClientCertificate`). Servers such as nginx
/// (`ssl_verify_client on` or `optional`) finish the handshake without a certificate and answer
/// at the HTTP level, so a failed handshake alone does not reveal them.
///
/// libcurl reports no such thing, so an OpenSSL certificate callback (`SSL_CTX_set_cert_cb`, which
/// OpenSSL calls on a client only when the server requested a certificate, after the server's own
/// certificate was verified) is installed through `CURLOPT_SSL_CTX_FUNCTION`. The callback ends the
/// handshake (the transfer fails with `CURLE_SSL_CONNECT_ERROR`) and ``wasRequested`` tells the
/// handler to ask the delegate; the next attempt presents the chosen certificate, or goes on without
/// one, and is not watched.
///
/// OpenSSL is reached through `dlsym` in the libssl that libcurl loaded (Courier does not link
/// libssl, as for the negotiated TLS parameters); with another TLS backend ``install(on:)`` does
/// nothing and only a failed handshake reveals the server's wish
/// (``HTTPClientCertificate/serverRequiresCertificate(result:detail:)``).
///
/// The server-trust probe uses a watch that also keeps the server's chain (``capturedChain``): a
/// server that refuses a TLS 1.2 handshake without a client certificate ends it before libcurl
/// collects the certificates.
final class TLSClientCertificateRequest: @unchecked Sendable {
    private let token: UInt

    /// `capturingChain`: keep the server's certificates when it asks (and go on with the handshake
    /// if they cannot be read).
    init(capturingChain: Bool = false) {
        token = Self.registry.add(capturingChain: capturingChain)
    }

    deinit { Self.registry.remove(token) }

    /// Whether the server asked for a certificate during this watch's handshake.
    var wasRequested: Bool { Self.registry.entry(token)?.requested ?? false }

    /// The server's chain (DER, leaf first) as it was when it asked for a certificate.
    var capturedChain: [Data] { Self.registry.entry(token)?.chain ?? [] }

    /// Watches `transfer`'s TLS handshakes; false when the callback cannot be installed.
    @discardableResult
    func install(on transfer: CurlTransfer) -> Bool { install(on: transfer.easy) }

    /// Watches the TLS handshakes of an easy handle (which must not outlive this watch's use).
    @discardableResult
    func install(on easy: UnsafeMutableRawPointer) -> Bool {
        guard OpenSSLCertificateCallback.setCertificateCallback != nil else { return false }
        let function = unsafeBitCast(sslContextCallback, to: UnsafeRawPointer.self)
        guard courier_easy_setopt_pointer(easy, CURLOPT_SSL_CTX_FUNCTION, function) == CURLE_OK else { return false }
        return courier_easy_setopt_pointer(easy, CURLOPT_SSL_CTX_DATA, UnsafeRawPointer(bitPattern: token)) == CURLE_OK
    }

    // MARK: Tokens

    /// The watches by token. The C callbacks get a token rather than a pointer: an SSL context can
    /// outlive its transfer (the connection is pooled), and a stale token is simply not found.
    private final class Registry: @unchecked Sendable {
        struct Entry {
            var capturingChain: Bool
            var requested = false
            var chain: [Data] = []
        }

        private let lock = Lock()
        private var entries: [UInt: Entry] = [:]
        private var next: UInt = 1

        func add(capturingChain: Bool) -> UInt {
            lock.withLock {
                defer { next += 1 }
                entries[next] = Entry(capturingChain: capturingChain)
                return next
            }
        }

        func remove(_ token: UInt) { lock.withLock { _ = entries.removeValue(forKey: token) } }

        func entry(_ token: UInt) -> Entry? { lock.withLock { entries[token] } }

        func update(_ token: UInt, _ change: (inout Entry) -> Void) {
            lock.withLock {
                guard var entry = entries[token] else { return }
                change(&entry)
                entries[token] = entry
            }
        }
    }

    private static let registry = Registry()

    /// OpenSSL calls this when the server asked for a certificate: a live watch records it and
    /// stops the handshake (a capturing one only once it has the chain).
    fileprivate static func certificateRequested(token: UInt, ssl: OpaquePointer?) -> Int32 {
        guard let entry = registry.entry(token) else { return 1 }
        var chain: [Data] = []
        if entry.capturingChain {
            chain = OpenSSLCertificateCallback.peerChain(of: ssl)
            if chain.isEmpty { return 1 }
        }
        registry.update(token) {
            $0.requested = true
            $0.chain = chain
        }
        return 0
    }
}

/// `SSL_CTX_set_cert_cb`, looked up once in the process (libcurl's libssl).
private enum OpenSSLCertificateCallback {
    typealias CertificateCallback = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32
    typealias SetCertificateCallback = @convention(c) (UnsafeMutableRawPointer?, CertificateCallback?, UnsafeMutableRawPointer?) -> Void

    static let setCertificateCallback: SetCertificateCallback? = {
        guard let symbol = symbol("SSL_CTX_set_cert_cb") else { return nil }
        return unsafeBitCast(symbol, to: SetCertificateCallback.self)
    }()

    private static func symbol(_ name: String) -> UnsafeMutableRawPointer? {
        guard CurlGlobal.isInitialized, let process = dlopen(nil, RTLD_LAZY) else { return nil }
        return dlsym(process, name)
    }

    private typealias PeerChain = @convention(c) (OpaquePointer?) -> OpaquePointer?
    private typealias StackCount = @convention(c) (OpaquePointer?) -> Int32
    private typealias StackValue = @convention(c) (OpaquePointer?, Int32) -> OpaquePointer?
    private typealias EncodeCertificate = @convention(c) (OpaquePointer?, UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32

    /// `SSL_get_peer_cert_chain`, `OPENSSL_sk_num`, `OPENSSL_sk_value`, `i2d_X509`.
    private static let chainFunctions: (PeerChain, StackCount, StackValue, EncodeCertificate)? = {
        guard let chain = symbol("SSL_get_peer_cert_chain"), let count = symbol("OPENSSL_sk_num"),
              let value = symbol("OPENSSL_sk_value"), let encode = symbol("i2d_X509") else { return nil }
        return (unsafeBitCast(chain, to: PeerChain.self), unsafeBitCast(count, to: StackCount.self),
                unsafeBitCast(value, to: StackValue.self), unsafeBitCast(encode, to: EncodeCertificate.self))
    }()

    /// The certificates the server sent so far (DER; on a client the stack starts with the leaf).
    static func peerChain(of ssl: OpaquePointer?) -> [Data] {
        guard let ssl, let (peerChain, count, value, encode) = chainFunctions, let stack = peerChain(ssl) else { return [] }
        return (0..<max(count(stack), 0)).compactMap { index -> Data? in
            guard let certificate = value(stack, index) else { return nil }
            let length = encode(certificate, nil)
            guard length > 0 else { return nil }
            var bytes = [UInt8](repeating: 0, count: Int(length))
            let written = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
                var cursor = buffer.baseAddress
                return encode(certificate, &cursor)
            }
            return written == length ? Data(bytes) : nil
        }
    }
}

/// `CURLOPT_SSL_CTX_FUNCTION`: called for each new TLS connection of a watched transfer, with the
/// watch's token as user data.
private let sslContextCallback: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> CURLcode = { _, context, token in
    if let context, let set = OpenSSLCertificateCallback.setCertificateCallback {
        set(context, certificateCallback, token)
    }
    return CURLE_OK
}

/// OpenSSL's certificate callback: 1 goes on, 0 ends the handshake.
private let certificateCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32 = { ssl, token in
    guard let token else { return 1 }
    return TLSClientCertificateRequest.certificateRequested(token: UInt(bitPattern: token), ssl: ssl)
}
