import CCurl
import Foundation

/// The handler for `http:` and `https:` URLs, on libcurl.
///
/// Each load is one easy handle on the session's ``CurlMultiLoop``: connections are reused across
/// the session's tasks, HTTPS negotiates HTTP/2 by ALPN (HTTP/1.1 otherwise), and bodies stream —
/// responses to the task as they arrive (pausing libcurl while the consumer is behind), request
/// bodies from memory, a file or a stream. Content encodings (gzip, deflate, br, zstd) are decoded.
/// Redirects are not followed by libcurl: they go back to the task, which asks the delegate
/// (``HTTPRedirectRequest`` builds the proposed request).
final class HTTPURLProtocol: URLProtocol, SchemeHandler, FlowControlledURLProtocol, CurlTransferDelegate, @unchecked Sendable {
    static let schemes = ["http", "https"]

    private enum State { case idle, running, paused, redirected, stopped, finished }

    private let lock = Lock()
    private var state = State.idle
    private var transfer: CurlTransfer?
    private var loop: CurlMultiLoop?
    private var responseDelivered = false
    private var malformedHead = false
    private var lastBytesSent: Int64 = 0
    private var started = Date()

    override class func canInit(with request: URLRequest) -> Bool {
        guard let scheme = request.url?.scheme?.lowercased(), scheme == "http" || scheme == "https" else { return false }
        return !(request.url?.host ?? "").isEmpty
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        guard let url = request.url else { return }
        let environment = (client as? BuiltInHandlerClient)?.environment ?? .standalone()
        guard let loop = CurlMultiLoop.shared(in: environment), let transfer = CurlTransfer(delegate: self) else {
            client?.urlProtocol(self, didFailWithError: URLError(.cannotLoadFromNetwork, url: url,
                                                                 description: "libcurl could not be initialised."))
            return
        }
        do {
            try HTTPTransferConfiguration.configure(transfer, for: request, environment: environment)
        } catch {
            client?.urlProtocol(self, didFailWithError: error)
            return
        }
        let proceed: Bool = lock.withLock {
            guard state == .idle else { return false }
            state = .running
            self.transfer = transfer
            self.loop = loop
            started = Date()
            return true
        }
        if proceed { loop.add(transfer) }
    }

    override func stopLoading() {
        let (transfer, loop): (CurlTransfer?, CurlMultiLoop?) = lock.withLock {
            if state != .finished { state = .stopped }
            defer { self.transfer = nil; self.loop = nil }
            return (self.transfer, self.loop)
        }
        if let transfer, let loop { loop.remove(transfer) }
    }

    func resumeProducing() {
        let (transfer, loop): (CurlTransfer?, CurlMultiLoop?) = lock.withLock {
            guard state == .paused else { return (nil, nil) }
            state = .running
            return (self.transfer, self.loop)
        }
        if let transfer, let loop { loop.unpause(transfer) }
    }

    // MARK: CurlTransferDelegate (loop thread)

    func transfer(_ transfer: CurlTransfer, didReceiveHead head: CurlResponseHead) {
        guard lock.withLock({ state == .running || state == .paused }), let requestURL = request.url else { return }
        let url = transfer.info(string: CURLINFO_EFFECTIVE_URL).flatMap(URL.init(string:)) ?? requestURL
        let response = HTTPURLResponse(url: url, statusCode: head.statusCode, httpVersion: head.httpVersion, fields: head.fields)
        let environment = (client as? BuiltInHandlerClient)?.environment
        if let environment { HTTPCookieHandling.store(from: response, for: request, environment: environment) }
        if let redirect = HTTPRedirectRequest.make(after: response, for: request) {
            lock.withLock { state = .redirected }
            client?.urlProtocol(self, wasRedirectedTo: redirect, redirectResponse: response)
            return
        }
        lock.withLock { responseDelivered = true }
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
    }

    func transfer(_ transfer: CurlTransfer, didReceive bytes: UnsafeRawBufferPointer) -> Bool {
        let current = lock.withLock { state }
        guard current == .running else { return current != .paused }
        if let builtIn = client as? BuiltInHandlerClient, !builtIn.canAcceptMoreData {
            let paused: Bool = lock.withLock {
                guard state == .running else { return false }
                state = .paused
                return true
            }
            if paused { return false }
        }
        client?.urlProtocol(self, didLoad: Data(bytes))
        return true
    }

    func transfer(_ transfer: CurlTransfer, didSend totalBytesSent: Int64, of expected: Int64) {
        let delta: Int64 = lock.withLock {
            defer { lastBytesSent = totalBytesSent }
            return totalBytesSent - lastBytesSent
        }
        guard delta > 0 else { return }
        (client as? BuiltInHandlerClient)?.didSendBodyData(delta, totalBytesSent: totalBytesSent,
                                                           totalBytesExpectedToSend: expected > 0 ? expected : NSURLSessionTransferSizeUnknown)
    }

    func transfer(_ transfer: CurlTransfer, didFinishWith result: CURLcode) {
        let (proceed, delivered, start): (Bool, Bool, Date) = lock.withLock {
            guard state == .running || state == .paused else { return (false, false, started) }
            state = .finished
            self.transfer = nil
            self.loop = nil
            return (true, responseDelivered, started)
        }
        guard proceed else { return }
        if let builtIn = client as? BuiltInHandlerClient {
            let measured = CurlTransferMetrics(transfer, started: start)
            builtIn.didCollectTransactionMetrics { measured.apply(to: &$0) }
        }
        let url = request.url
        if result == CURLE_OK && delivered {
            client?.urlProtocolDidFinishLoading(self)
        } else if result == CURLE_OK || (result == CURLE_WRITE_ERROR && !delivered) {
            client?.urlProtocol(self, didFailWithError: URLError(.badServerResponse, url: url,
                                                                 description: "The server's response could not be parsed."))
        } else {
            client?.urlProtocol(self, didFailWithError: CurlErrorMapping.error(for: result, url: url))
        }
    }
}
