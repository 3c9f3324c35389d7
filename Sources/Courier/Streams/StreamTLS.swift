internal import COpenSSL
import Foundation

/// OpenSSL over a stream task's socket: a client session made when `startSecureConnection()` takes
/// effect, so a connection can begin in plain text and upgrade (STARTTLS). The session's trust
/// settings apply: its TLS versions, its trust anchors (the system's unless the environment names
/// others, as for https), and the host name (or IP address) the certificate must match. The chain
/// is not verified during the handshake: its result is read afterwards (``verification()``), so a
/// failure can become a server-trust challenge instead of a broken handshake.
///
/// Not thread-safe: used by the thread driving the session's loop, then (after `captureStreams()`)
/// by the captured streams under their lock.
final class StreamTLS: @unchecked Sendable {
    /// What a non-blocking TLS call did.
    enum Outcome: Equatable {
        /// This many application bytes moved (or the handshake is done, with 0).
        case bytes(Int)
        /// OpenSSL needs the socket readable first.
        case wantRead
        /// OpenSSL needs the socket writable first.
        case wantWrite
        /// The peer closed the TLS session (close_notify) or the connection.
        case endOfStream
        /// The call failed; the text says why.
        case failed(String)
    }

    private let context: OpaquePointer
    private let ssl: OpaquePointer

    /// A client session on `descriptor` for `host`; throws `secureConnectionFailed` (without a
    /// `failingURL`: the caller adds it) when OpenSSL refuses the settings.
    init(descriptor: Int32, host: String, versions: ClosedRange<UInt16>, anchors: TLSTrustAnchors?) throws(URLError) {
        _ = OpenSSLProcessState.isInitialized
        let minimum = Int32(max(versions.lowerBound, 0x0301))
        let maximum = Int32(min(max(versions.upperBound, versions.lowerBound), 0x0304))
        guard let context = courier_ssl_client_context(minimum, maximum) else {
            throw URLError(.secureConnectionFailed, url: nil, description: "OpenSSL refused the TLS versions \(Self.text(versions)).")
        }
        guard courier_ssl_load_anchors(context, anchors?.file, anchors?.directory) == 1 else {
            SSL_CTX_free(context)
            throw URLError(.secureConnectionFailed, url: nil, description: "The trust anchors could not be loaded: \(Self.lastError()).")
        }
        guard let ssl = SSL_new(context) else {
            SSL_CTX_free(context)
            throw URLError(.secureConnectionFailed, url: nil, description: "OpenSSL could not make a TLS session: \(Self.lastError()).")
        }
        let isAddress = host.contains(":") || host.allSatisfy { $0.isNumber || $0 == "." }
        guard SSL_set_fd(ssl, descriptor) == 1, courier_ssl_set_peer_name(ssl, host, isAddress ? 1 : 0) == 1 else {
            SSL_free(ssl)
            SSL_CTX_free(context)
            throw URLError(.secureConnectionFailed, url: nil, description: "OpenSSL refused the server name “\(host)”.")
        }
        self.context = context
        self.ssl = ssl
    }

    deinit {
        SSL_free(ssl)
        SSL_CTX_free(context)
    }

    /// Advances the handshake.
    func handshake() -> Outcome {
        courier_ssl_clear_errors()
        let result = SSL_connect(ssl)
        return result == 1 ? .bytes(0) : outcome(of: result)
    }

    /// Reads application bytes into `buffer`.
    func read(into buffer: UnsafeMutableRawPointer, count: Int) -> Outcome {
        courier_ssl_clear_errors()
        let result = SSL_read(ssl, buffer, Int32(min(count, Int(Int32.max))))
        return result > 0 ? .bytes(Int(result)) : outcome(of: result)
    }

    /// Writes application bytes (as many as OpenSSL takes now).
    func write(_ bytes: UnsafeRawBufferPointer) -> Outcome {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return .bytes(0) }
        courier_ssl_clear_errors()
        let result = SSL_write(ssl, base, Int32(min(bytes.count, Int(Int32.max))))
        return result > 0 ? .bytes(Int(result)) : outcome(of: result)
    }

    /// Sends close_notify (once; best effort, it does not wait for the peer's).
    func shutdown() {
        courier_ssl_clear_errors()
        _ = SSL_shutdown(ssl)
        courier_ssl_clear_errors()
    }

    /// The certificate verification's result after the handshake: `nil` when the server is
    /// trusted, else why not.
    func verification() -> String? {
        var text: UnsafePointer<CChar>?
        let result = courier_ssl_verify_result(ssl, &text)
        guard result != Int(X509_V_OK) else { return nil }
        return text.map { String(cString: $0) } ?? "certificate verification failed (\(result))"
    }

    /// The certificates the server sent, DER, leaf first.
    func peerChain() -> [Data] {
        var chain: [Data] = []
        for index in 0..<courier_ssl_peer_chain_count(ssl) {
            var der: UnsafeMutablePointer<UInt8>?
            let length = courier_ssl_peer_chain_der(ssl, index, &der)
            guard length > 0, let der else { continue }
            chain.append(Data(bytes: der, count: Int(length)))
            courier_ssl_free(der)
        }
        return chain
    }

    private func outcome(of result: Int32) -> Outcome {
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ: return .wantRead
        case SSL_ERROR_WANT_WRITE: return .wantWrite
        case SSL_ERROR_ZERO_RETURN: return .endOfStream
        case SSL_ERROR_SYSCALL:
            let reason = Self.lastError()
            return reason.isEmpty && result == 0 ? .endOfStream : .failed(reason.isEmpty ? String(cString: strerror(errno)) : reason)
        default:
            let reason = Self.lastError()
            return .failed(reason.isEmpty ? "TLS error" : reason)
        }
    }

    /// The oldest OpenSSL error of this thread, as text (empty when none).
    private static func lastError() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        courier_ssl_error_text(&buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func text(_ versions: ClosedRange<UInt16>) -> String {
        String(format: "0x%04x–0x%04x", versions.lowerBound, versions.upperBound)
    }
}
