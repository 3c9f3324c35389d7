internal import CCurl
import Foundation
import Synchronization

/// Opens the TCP (and, for wss, TLS) connection of a WebSocket handshake with libcurl:
/// `CURLOPT_CONNECT_ONLY` on the http(s) form of the URL, so libcurl resolves the host, goes
/// through the session's proxy (a CONNECT tunnel, also for ws), negotiates TLS (HTTP/1.1 by ALPN)
/// and verifies the server against the session's trust anchors, or pins a server the delegate
/// accepted — exactly as for an https data task. Then libcurl is done: the handshake's request and
/// every frame go through ``WebSocketTransport`` with `curl_easy_send` and `curl_easy_recv`.
///
/// The connection is made with `curl_easy_perform` on a global queue, not on the session's multi
/// handle: a connect-only connection must stay out of a multi handle's connection cache, where
/// another transfer's look-up closes an idle connection that has unread input or is older than
/// libcurl's maximum idle age — which is any WebSocket — and where removing its handle closes it.
/// The blocking part is bounded by the connect timeout and can be aborted (``Connection/abort()``).
enum WebSocketConnector {
    /// One easy handle, connected once ``connect(_:)`` succeeded; cleaned up with this object.
    final class Connection: CurlTransferDelegate, @unchecked Sendable {
        /// The handle and its options (a ``CurlTransfer`` for the shared option helpers). Set once
        /// in `init`; only the thread that owns the connection at the time uses it.
        private(set) var transfer: CurlTransfer?
        private let aborted = Atomic<Bool>(false)

        /// A new handle; `nil` when libcurl cannot make one.
        init?() {
            transfer = nil
            guard let transfer = CurlTransfer(delegate: self, headerMode: .http) else { return nil }
            self.transfer = transfer
        }

        /// The easy handle.
        var easy: UnsafeMutableRawPointer? { transfer?.easy }

        /// Makes a connect in progress give up at its next progress report.
        func abort() { aborted.store(true, ordering: .relaxed) }

        /// Whether ``abort()`` was called.
        var isAborted: Bool { aborted.load(ordering: .relaxed) }

        // Nothing is transferred through libcurl's callbacks on a connect-only handle.
        func transfer(_ transfer: CurlTransfer, didReceiveHead head: CurlResponseHead) {}
        func transfer(_ transfer: CurlTransfer, didReceive bytes: UnsafeRawBufferPointer) -> Bool { true }
        func transfer(_ transfer: CurlTransfer, didSend totalBytesSent: Int64, of expected: Int64) {}
        func transfer(_ transfer: CurlTransfer, didFinishWith result: CURLcode) {}
    }

    /// How a connect ended badly.
    enum Failure: Error {
        /// The server's certificate failed verification: a server-trust challenge may accept it.
        case untrustedServer(URLError, detail: String?)
        /// The proxy refused the tunnel with 407 (`response` lists the schemes it offered; `proxy` is
        /// its host and port): an authentication challenge may answer it.
        case proxyRefused(HTTPURLResponse, proxy: (host: String, port: Int)?, error: URLError)
        /// Any other failure.
        case failed(URLError)
    }

    /// A connected handle and its socket.
    struct Connected {
        let connection: Connection
        let socket: Int32
        /// Nothing but TCP lies between Courier and the server: no TLS (ws:) and no HTTP proxy
        /// tunnel (whose proxy may be reached over TLS). ``WebSocketTransport`` then uses the
        /// socket directly.
        var isPlain = false
    }

    /// Connects `connection` to the server of `url` (an http or https URL). Blocks: call it off
    /// the loop thread.
    /// - Parameters:
    ///   - timeout: the connect timeout (0: libcurl's).
    ///   - acceptedServer: a server the delegate accepted after a trust challenge, pinned instead of
    ///     verified.
    ///   - proxyCredential: the credential for the proxy, after a 407 was answered.
    static func connect(_ connection: Connection, to url: URL, environment: HandlerEnvironment, timeout: TimeInterval,
                        acceptedServer: TLSServerTrust?, proxyCredential: ProxyCredential? = nil) -> Result<Connected, Failure> {
        guard let transfer = connection.transfer else {
            return .failure(.failed(URLError(.cannotConnectToHost, url: url, description: "libcurl could not make a handle.")))
        }
        var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        components?.path = "/"
        components?.query = nil
        components?.fragment = nil
        components?.user = nil
        components?.password = nil
        guard let address = components?.string, transfer.setURL(address, reportedAs: nil) else {
            return .failure(.failed(URLError(.badURL, url: url, description: "libcurl does not accept this URL.")))
        }
        let secure = url.scheme?.lowercased() == "https"
        transfer.set(CURLOPT_PROTOCOLS_STR, HTTPTransferConfiguration.protocols)
        transfer.set(CURLOPT_CONNECT_ONLY, 1)
        transfer.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1))
        // Through an HTTP proxy, ws too goes through a CONNECT tunnel: the proxy must not read frames.
        transfer.set(CURLOPT_HTTPPROXYTUNNEL, 1)
        transfer.set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
        transfer.set(CURLOPT_TCP_KEEPALIVE, 1)
        transfer.set(CURLOPT_TCP_NODELAY, 1)
        if secure {
            transfer.set(CURLOPT_SSLVERSION, TLSVersionOption.value(for: environment.tlsVersions))
            // Resume the session's earlier TLS sessions with this server (the 401's retry, the next task).
            if let sessions = CurlTLSSessionCache.of(environment) { transfer.useTLSSessions(sessions) }
        }
        environment.tlsTrustAnchors?.apply(to: transfer)
        acceptedServer?.apply(to: transfer)
        HTTPProxyConfiguration.apply(environment.proxyDictionary, for: url, to: transfer)
        if let proxyCredential {
            transfer.set(CURLOPT_PROXYUSERNAME, proxyCredential.user)
            transfer.set(CURLOPT_PROXYPASSWORD, proxyCredential.password)
            transfer.set(CURLOPT_PROXYAUTH, proxyCredential.mask)
        }
        if timeout > 0, timeout.isFinite {
            transfer.set(CURLOPT_CONNECTTIMEOUT_MS, Int(min(timeout, 1e6) * 1000))
        }
        let me = Unmanaged.passUnretained(connection).toOpaque()
        _ = courier_easy_setopt_pointer(transfer.easy, CURLOPT_XFERINFODATA, me)
        _ = courier_easy_setopt_xferinfo_function(transfer.easy, connectProgressCallback)
        transfer.set(CURLOPT_NOPROGRESS, 0)
        let result = withExtendedLifetime(connection) { curl_easy_perform(transfer.easy) }
        if connection.isAborted {
            return .failure(.failed(URLError(.cancelled, url: url, description: "The WebSocket task was cancelled.")))
        }
        guard result == CURLE_OK else {
            let detail = transfer.errorDetail
            if secure, acceptedServer == nil, result == CURLE_PEER_FAILED_VERIFICATION {
                let code = TLSServerTrust.errorCode(forVerificationFailure: detail ?? "")
                return .failure(.untrustedServer(URLError(code, url: url, description: "The server's certificate was not trusted: \(detail ?? "verification failed").",
                                                           underlying: nil), detail: detail))
            }
            let error = CurlErrorMapping.error(for: result, url: url, detail: detail)
            if let refusal = HTTPAuthentication.tunnelRefusal(of: transfer, url: url) {
                return .failure(.proxyRefused(refusal, proxy: HTTPURLProtocol.proxyEndpoint(of: transfer, for: url, environment: environment),
                                              error: error))
            }
            return .failure(.failed(error))
        }
        let socket = courier_easy_active_socket(transfer.easy)
        guard socket >= 0 else {
            return .failure(.failed(URLError(.cannotConnectToHost, url: url, description: "libcurl gave no socket for the connection.")))
        }
        // No CONNECT answer: no HTTP proxy tunnel (a SOCKS proxy leaves the socket plain TCP).
        let tunnelled = (transfer.info(long: CURLINFO_HTTP_CONNECTCODE) ?? 1) != 0
        return .success(Connected(connection: connection, socket: socket, isPlain: !secure && !tunnelled))
    }
}

private let connectProgressCallback: @convention(c) (UnsafeMutableRawPointer?, curl_off_t, curl_off_t, curl_off_t, curl_off_t) -> Int32 = { userdata, _, _, _, _ in
    guard let userdata else { return 0 }
    return Unmanaged<WebSocketConnector.Connection>.fromOpaque(userdata).takeUnretainedValue().isAborted ? 1 : 0
}
