internal import CCurl
import Foundation

/// The handler for `ftp:` and `ftps:` URLs, on the session's libcurl loop (``CurlMultiLoop``), so
/// control connections are reused per host and user across the session's tasks.
///
/// - A URL ending in `/` lists the directory: `MLSD` when the server has it, `LIST` otherwise, parsed
///   line by line as it arrives (``FTPListingStream``) and streamed as a ``URLDirectoryListing`` body
///   with back-pressure, within ``DirectoryListingLimits``.
/// - Another URL downloads the file, streaming with back-pressure; the response carries the size
///   and a MIME type from the file name. A resumed download first checks the file's size and
///   modification time (``FTPResumeValidator``) and continues with `REST`, or starts over when the
///   file changed.
/// - A request with a body (an upload task) stores it (`STOR`), reporting `didSendBodyData`.
/// - Login: see ``FTPLogin``; a refused login becomes an authentication challenge. `ftps:` uses
///   implicit TLS, ``URLRequest/ftpRequiresTLS`` explicit `AUTH TLS`; an untrusted certificate
///   becomes a server-trust challenge (``TLSServerTrustChallenge``).
final class FTPURLProtocol: BuiltInURLProtocol, CurlTransferDelegate, @unchecked Sendable {
    /// The schemes ``canInit(with:)`` accepts (the rows `BuiltInHandlers` gives this class).
    static let schemes: [BuiltInScheme] = [.ftp, .ftps]

    enum State { case idle, running, challenging, stopped, finished }

    private let lock = Lock()
    private var state = State.idle
    private var operation = FTPOperation.download(offset: 0)
    private var transfer: CurlTransfer?
    private var loop: CurlMultiLoop?
    private var responseDelivered = false
    private let uploadProgress = CurlUploadProgress()
    /// Pauses the running download while the task cannot take more, and wakes it.
    private let flowControl = CurlFlowControl()
    private var started = Date()
    private var login: FTPLogin?
    private var acceptedServer: TLSServerTrust?
    /// The listing being parsed as it arrives.
    private var listing: FTPListingStream?
    /// The resume offset the probe confirmed, reported with the response.
    private var confirmedResume: (offset: Int64, total: Int64)?
    private var deliveredBytes: Int64 = 0
    /// A new upload stream from the delegate, for an attempt after the first.
    private var replacementBodyStream: InputStream?

    override class func canInit(with request: URLRequest) -> Bool {
        guard let name = request.url?.scheme?.lowercased(), let scheme = BuiltInScheme(rawValue: name),
              schemes.contains(scheme) else { return false }
        return !(request.url?.host ?? "").isEmpty
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    /// The session's stores and settings, read from the client once: a handler driven outside a
    /// session keeps one standalone environment, and so one loop, for its whole load.
    private let environment: HandlerEnvironment

    required init(request: URLRequest, cachedResponse: CachedURLResponse?, client: (any URLProtocolClient)?) {
        environment = (client as? BuiltInHandlerClient)?.environment ?? .standalone()
        super.init(request: request, cachedResponse: cachedResponse, client: client)
    }

    override func startLoading() {
        guard let url = request.url else { return }
        let environment = self.environment
        guard let login = FTPLogin(url: url, environment: environment) else {
            fail(URLError(.badURL, url: url, description: "The FTP URL has no host."), expecting: .idle)
            return
        }
        let lacksMLSD = FTPServerFeatures.shared(in: environment)?.lacksMLSD(url) ?? false
        lock.withLock {
            self.login = login
            acceptedServer = TLSAcceptedServers.shared(in: environment)?.server(for: url)
        }
        start(FTPOperation.initial(for: request, serverLacksMLSD: lacksMLSD), expecting: .idle)
    }

    override func stopLoading() {
        let (transfer, loop): (CurlTransfer?, CurlMultiLoop?) = lock.withLock {
            if state != .finished { state = .stopped }
            defer { self.transfer = nil; self.loop = nil }
            return (self.transfer, self.loop)
        }
        transfer?.abandon()
        if let transfer, let loop { loop.remove(transfer) }
    }

    override func resumeProducing() {
        guard flowControl.wake() else { return }
        let (transfer, loop) = lock.withLock { (self.transfer, self.loop) }
        if let transfer, let loop { loop.unpause(transfer) }
    }

    // MARK: Attempts

    /// Starts `operation` if the handler is in state `expected`.
    private func start(_ operation: FTPOperation, expecting expected: State) {
        guard let url = request.url else { return }
        let environment = self.environment
        guard let loop = CurlMultiLoop.shared(in: environment),
              let transfer = CurlTransfer(delegate: self, headerMode: .ftp) else {
            fail(URLError(.cannotLoadFromNetwork, url: url, description: "libcurl could not be initialised, or the session was invalidated."), expecting: expected)
            return
        }
        var outgoing = request
        if let stream = lock.withLock({ () -> InputStream? in
            defer { replacementBodyStream = nil }
            return replacementBodyStream
        }) {
            outgoing.httpBodyStream = stream
        }
        do {
            try FTPTransferConfiguration.configure(transfer, for: outgoing, operation: operation, environment: environment)
        } catch {
            fail(error, expecting: expected)
            return
        }
        let (login, accepted) = lock.withLock { (self.login, acceptedServer) }
        login?.apply(to: transfer)
        accepted?.apply(to: transfer)
        let proceed: Bool = lock.withLock {
            guard state == expected else { return false }
            state = .running
            self.operation = operation
            self.transfer = transfer
            self.loop = loop
            uploadProgress.reset()
            flowControl.reset()
            if case .list(let machineReadable) = operation {
                listing = FTPListingStream(machineReadable: machineReadable)
            } else {
                listing = nil
            }
            started = Date()
            return true
        }
        if proceed { loop.add(transfer) }
    }

    private func fail(_ error: URLError, expecting expected: State) {
        let proceed: Bool = lock.withLock {
            guard state == expected else { return false }
            state = .finished
            return true
        }
        if proceed { client?.urlProtocol(self, didFailWithError: error) }
    }

    // MARK: CurlTransferDelegate (loop thread)

    func transfer(_ transfer: CurlTransfer, didReceiveHead head: CurlResponseHead) {}

    func transfer(_ transfer: CurlTransfer, didReceive bytes: UnsafeRawBufferPointer) -> Bool {
        let (current, operation): (State, FTPOperation) = lock.withLock { (state, self.operation) }
        guard current == .running else { return true }
        switch operation {
        case .list:
            return receiveListing(bytes, transfer: transfer)
        case .probe:
            // libcurl writes what it learned ("Content-Length: …", "Last-Modified: …") as the body of
            // a transfer without one; the probe reads the same from CURLINFO instead.
            return true
        case .download, .upload:
            break
        }
        if !lock.withLock({ responseDelivered }) { deliverDownloadResponse(transfer) }
        if flowControl.shouldPause(for: client) { return false }
        lock.withLock { deliveredBytes += Int64(bytes.count) }
        client?.urlProtocol(self, didLoad: Data(bytes))
        return true
    }

    func transfer(_ transfer: CurlTransfer, didSend totalBytesSent: Int64, of expected: Int64) {
        uploadProgress.report(totalBytesSent: totalBytesSent, expected: expected, to: client)
    }

    func transfer(_ transfer: CurlTransfer, didFinishWith result: CURLcode) {
        let outcome: (FTPOperation, Bool, Date)? = lock.withLock {
            guard state == .running else { return nil }
            self.transfer = nil
            self.loop = nil
            return (operation, responseDelivered, started)
        }
        guard let (operation, delivered, start) = outcome else { return }
        reportMetrics(of: transfer, operation: operation, started: start)
        if result == CURLE_OK {
            login?.succeeded(environment: environment)
            finishSuccessfully(operation, transfer: transfer, delivered: delivered)
        } else {
            finishWithFailure(result, operation: operation, transfer: transfer, delivered: delivered)
        }
    }

    // MARK: Outcomes

    private func finishSuccessfully(_ operation: FTPOperation, transfer: CurlTransfer, delivered: Bool) {
        switch operation {
        case .probe:
            continueAfterProbe(transfer)
        case .download:
            if !delivered { deliverDownloadResponse(transfer) }
            finish()
        case .list:
            finishListing()
        case .upload:
            let response = URLResponse(url: request.url ?? URL(fileURLWithPath: "/"), mimeType: nil,
                                       expectedContentLength: 0, textEncodingName: nil)
            lock.withLock { responseDelivered = true }
            client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
            finish()
        }
    }

    private func finishWithFailure(_ result: CURLcode, operation: FTPOperation, transfer: CurlTransfer, delivered: Bool) {
        let url = request.url
        let reply = transfer.lastServerReply
        let detail = [transfer.errorDetail, reply.map { "the server said \"\($0)\"" }].compactMap { $0 }.joined(separator: "; ")
        let code = transfer.info(long: CURLINFO_RESPONSE_CODE) ?? 0
        if case .list(machineReadable: true) = operation, !delivered, (500...504).contains(code), result != CURLE_LOGIN_DENIED {
            // No MLSD: list with LIST from now on.
            if let url { FTPServerFeatures.shared(in: environment)?.recordLacksMLSD(url) }
            retry(.list(machineReadable: false))
            return
        }
        if (result == CURLE_BAD_DOWNLOAD_RESUME || result == CURLE_FTP_COULDNT_USE_REST), case .download(let offset) = operation,
           offset > 0, !delivered {
            // The file shrank, or the server cannot seek: start over.
            lock.withLock { confirmedResume = nil }
            retry(.download(offset: 0))
            return
        }
        if result == CURLE_LOGIN_DENIED {
            presentLoginChallenge(error: URLError(.userAuthenticationRequired, url: url,
                                                  description: "The FTP server refused the login\(reply.map { ": \($0)" } ?? ".")"))
            return
        }
        if result == CURLE_PEER_FAILED_VERIFICATION, lock.withLock({ acceptedServer == nil }), let url {
            presentTrustChallenge(url: url, error: CurlErrorMapping.error(for: result, url: url, detail: transfer.errorDetail),
                                  detail: transfer.errorDetail)
            return
        }
        complete(with: FTPErrorMapping.error(for: result, operation: operation, url: url, reply: reply,
                                              detail: detail.isEmpty ? nil : detail))
    }

    /// Starts `operation` after the current one ended without delivering anything.
    private func retry(_ operation: FTPOperation) {
        lock.withLock { if state == .running { state = .challenging } }
        start(operation, expecting: .challenging)
    }

    private func finish() {
        let proceed: Bool = lock.withLock {
            guard state == .running else { return false }
            state = .finished
            return true
        }
        if proceed { client?.urlProtocolDidFinishLoading(self) }
    }

    private func complete(with error: URLError) {
        let proceed: Bool = lock.withLock {
            guard state == .running || state == .challenging else { return false }
            state = .finished
            return true
        }
        if proceed { client?.urlProtocol(self, didFailWithError: error) }
    }

    // MARK: Downloads

    /// The response of a download: size and MIME type, the resume validator, and the resume offset
    /// the probe confirmed.
    private func deliverDownloadResponse(_ transfer: CurlTransfer) {
        guard let url = request.url else { return }
        let remaining = transfer.info(offset: CURLINFO_CONTENT_LENGTH_DOWNLOAD_T).flatMap { $0 >= 0 ? $0 : nil }
        let time = transfer.info(offset: CURLINFO_FILETIME_T)
        let resume: (offset: Int64, total: Int64)? = lock.withLock {
            responseDelivered = true
            return confirmedResume
        }
        if let builtIn = client as? BuiltInHandlerClient {
            if let resume {
                builtIn.setResumeValidator(FTPResumeValidator.make(size: resume.total, modificationTime: time) ?? "")
                builtIn.didResume(atOffset: resume.offset, expectedTotalBytes: resume.total)
            } else if let validator = FTPResumeValidator.make(size: remaining, modificationTime: time) {
                builtIn.setResumeValidator(validator)
            }
        }
        let response = URLResponse(url: url, mimeType: MIMETypeTable.mimeType(forPathExtension: url.pathExtension),
                                   expectedContentLength: remaining.map { Int($0) } ?? -1, textEncodingName: nil)
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
    }

    /// Compares the remote file with the resume data and continues or starts over.
    private func continueAfterProbe(_ transfer: CurlTransfer) {
        let size = transfer.info(offset: CURLINFO_CONTENT_LENGTH_DOWNLOAD_T).flatMap { $0 >= 0 ? $0 : nil }
        let time = transfer.info(offset: CURLINFO_FILETIME_T)
        let current = FTPResumeValidator.make(size: size, modificationTime: time)
        var next = FTPOperation.download(offset: 0)
        if let resume = ResumeRequest.parameters(of: request), let current, resume.validator == current,
           let size, resume.offset <= size {
            lock.withLock { confirmedResume = (resume.offset, size) }
            next = .download(offset: resume.offset)
        }
        retry(next)
    }

    // MARK: Listings

    /// Parses a piece of the listing and delivers the entries it completes, unless the consumer
    /// cannot take more now (libcurl pauses and hands the same bytes again later). A reply past the
    /// caps fails the load and stops the transfer.
    private func receiveListing(_ bytes: UnsafeRawBufferPointer, transfer: CurlTransfer) -> Bool {
        if !lock.withLock({ responseDelivered }) { deliverListingResponse() }
        if flowControl.shouldPause(for: client) { return false }
        let url = request.url
        let parsed: Result<Data, URLError>? = lock.withLock {
            guard state == .running, var stream = listing else { return nil }
            defer { listing = stream }
            do throws(URLError) {
                return .success(try stream.consume(bytes, url: url))
            } catch {
                return .failure(error)
            }
        }
        switch parsed {
        case .success(let body):
            deliverListingBody(body)
        case .failure(let error):
            stopTransfer()
            complete(with: error)
        case nil:
            break
        }
        return true
    }

    /// Delivers the last line (one without a line break) and ends the load.
    private func finishListing() {
        let url = request.url
        let tail: Result<Data, URLError> = lock.withLock {
            guard var stream = listing else { return .success(Data()) }
            defer { listing = nil }
            do throws(URLError) {
                return .success(try stream.finish(url: url))
            } catch {
                return .failure(error)
            }
        }
        if !lock.withLock({ responseDelivered }) { deliverListingResponse() }
        switch tail {
        case .success(let body):
            deliverListingBody(body)
            finish()
        case .failure(let error):
            complete(with: error)
        }
    }

    /// The response of a listing: its MIME type, length unknown (it streams).
    private func deliverListingResponse() {
        guard let url = request.url else { return }
        lock.withLock { responseDelivered = true }
        let response = URLResponse(url: url, mimeType: URLDirectoryListing.mimeType,
                                   expectedContentLength: -1, textEncodingName: "utf-8")
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
    }

    private func deliverListingBody(_ body: Data) {
        guard !body.isEmpty else { return }
        lock.withLock { deliveredBytes += Int64(body.count) }
        client?.urlProtocol(self, didLoad: body)
    }

    /// Takes the running transfer off the loop (the load ends with an error of its own).
    private func stopTransfer() {
        let (transfer, loop): (CurlTransfer?, CurlMultiLoop?) = lock.withLock {
            defer { self.transfer = nil; self.loop = nil }
            return (self.transfer, self.loop)
        }
        if let transfer, let loop { loop.remove(transfer) }
    }

    // MARK: Challenges

    private func presentLoginChallenge(error: URLError) {
        let login: FTPLogin? = lock.withLock {
            guard state == .running else { return nil }
            state = .challenging
            return self.login
        }
        guard let login else {
            complete(with: error)
            return
        }
        let operation = lock.withLock { self.operation }
        let sender = HandlerChallengeSender { [weak self] answer in
            guard let self else { return }
            switch login.resolve(answer, refusal: error, environment: environment) {
            case .retry: retryAfterChallenge(operation)
            case .fail(let failure): complete(with: failure)
            }
        }
        client?.urlProtocol(self, didReceive: login.makeChallenge(error: error, sender: sender))
    }

    /// Starts `operation` again after a challenge; an upload from a stream asks for a new stream.
    private func retryAfterChallenge(_ operation: FTPOperation) {
        CurlBodyStreamRetry.prepare(for: request, client: client, proceed: { [weak self] stream in
            guard let self else { return }
            lock.withLock { replacementBodyStream = stream }
            start(operation, expecting: .challenging)
        }, fail: { [weak self] error in self?.complete(with: error) })
    }

    private func presentTrustChallenge(url: URL, error: URLError, detail: String?) {
        let operation: FTPOperation? = lock.withLock {
            guard state == .running else { return nil }
            state = .challenging
            return self.operation
        }
        guard let operation else { return }
        TLSServerTrustChallenge.present(
            for: url, error: error, detail: detail, environment: environment,
            explicitFTPTLS: url.scheme?.lowercased() == "ftp",
            deliver: { [weak self] challenge in
                guard let self else { return }
                client?.urlProtocol(self, didReceive: challenge)
            },
            decided: { [weak self] outcome in
                guard let self else { return }
                switch outcome {
                case .accept(let accepted):
                    lock.withLock { acceptedServer = accepted }
                    retryAfterChallenge(operation)
                case .fail(let failure):
                    complete(with: failure)
                }
            })
    }

    // MARK: Metrics

    private func reportMetrics(of transfer: CurlTransfer, operation: FTPOperation, started: Date) {
        guard let builtIn = client as? BuiltInHandlerClient else { return }
        // A passive-mode transfer connects once more, for its data; active mode accepts instead.
        let dataConnections = operation == .probe || request.ftpUsesActiveMode ? 0 : 1
        let measured = CurlTransferMetrics(transfer, started: started, dataConnections: dataConnections,
                                           protocolName: request.url?.scheme?.lowercased())
        let decoded = lock.withLock { deliveredBytes }
        builtIn.didCollectTransactionMetrics {
            measured.apply(to: &$0)
            $0.countOfResponseBodyBytesAfterDecoding = decoded
        }
    }
}
