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
final class FTPURLProtocol: BuiltInURLProtocol, CurlLoadHandler, @unchecked Sendable {
    /// The schemes ``canInit(with:)`` accepts (the rows `BuiltInHandlers` gives this class).
    static let schemes: [BuiltInScheme] = [.ftp, .ftps]

    /// Guards the handler's own state below; a leaf.
    private let lock = Lock()
    /// The attempts of this load (one per operation) and where the load is.
    private let load = CurlLoad(headerMode: .ftp, pooled: false)
    /// What the current (or last) transfer does.
    private var operation = FTPOperation.download(offset: 0)
    private var login: FTPLogin?
    private var acceptedServer: TLSServerTrust?
    /// The listing being parsed as it arrives.
    private var listing: FTPListingStream?
    /// The resume offset the probe confirmed, reported with the response.
    private var confirmedResume: (offset: Int64, total: Int64)?

    override class func canInit(with request: URLRequest) -> Bool {
        guard let name = request.url?.scheme?.lowercased(), let scheme = BuiltInScheme(rawValue: name),
              schemes.contains(scheme) else { return false }
        return !(request.url?.host ?? "").isEmpty
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    /// The load's configuration, read from the client once: a handler driven outside a session
    /// keeps one standalone environment, and so one loop, for its whole load.
    private let configuration: HandlerConfiguration
    /// The session's stores and settings (``HandlerConfiguration/environment``).
    private var environment: HandlerEnvironment { configuration.environment }

    /// `client` as the task's client, cast once here (``CurlLoadHandler``).
    let builtInClient: (any BuiltInHandlerClient)?

    required init(request: URLRequest, cachedResponse: CachedURLResponse?, client: (any URLProtocolClient)?) {
        let builtIn = client as? BuiltInHandlerClient
        builtInClient = builtIn
        configuration = builtIn?.configuration ?? .standalone()
        super.init(request: request, cachedResponse: cachedResponse, client: client)
    }

    override func startLoading() {
        guard let url = request.url else { return }
        let environment = self.environment
        guard let login = FTPLogin(url: url, environment: environment) else {
            load.fail(URLError(.badURL, url: url, description: "The FTP URL has no host."), for: self, from: .idle)
            return
        }
        let lacksMLSD = FTPServerFeatures.shared(in: environment)?.lacksMLSD(url) ?? false
        let accepted = TLSAcceptedServers.shared(in: environment)?.server(for: url)
        lock.withLock {
            self.login = login
            acceptedServer = accepted
        }
        let operation = FTPOperation.initial(for: request, serverLacksMLSD: lacksMLSD)
        if case .failure(let error) = RangeStartOffset.of(request), case .download = operation {
            load.fail(error, for: self, from: .idle)
            return
        }
        start(operation, expecting: .idle)
    }

    override func stopLoading() {
        load.stop()
    }

    override func resumeProducing() {
        load.resumeProducing()
    }

    // MARK: Attempts

    /// Starts `operation` if the load is at `expected`; `bodyStream` replaces an upload stream the
    /// attempt before used.
    private func start(_ operation: FTPOperation, expecting expected: CurlLoad.Stage, bodyStream: InputStream? = nil) {
        let environment = self.environment
        // A passive-mode transfer connects once more, for its data; active mode accepts instead.
        let metrics = CurlLoad.MetricsContext(dataConnections: operation == .probe || request.ftpUsesActiveMode ? 0 : 1,
                                              protocolName: request.url?.scheme?.lowercased())
        load.start(expecting: expected, for: self, environment: environment, metrics: metrics) { transfer throws(URLError) in
            var outgoing = request
            if let bodyStream { outgoing.httpBodyStream = bodyStream }
            try FTPTransferConfiguration.configure(transfer, for: outgoing, operation: operation, configuration: configuration)
            let (login, accepted) = lock.withLock { (self.login, acceptedServer) }
            login?.apply(to: transfer)
            accepted?.apply(to: transfer)
            lock.withLock {
                self.operation = operation
                if case .list(let machineReadable) = operation {
                    listing = FTPListingStream(machineReadable: machineReadable)
                } else {
                    listing = nil
                }
            }
        }
    }

    /// Starts `operation` again after a challenge; an upload from a stream asks for a new stream.
    private func retryAfterChallenge(_ operation: FTPOperation) {
        load.retry(from: .challenging, for: self) { [weak self] stream in
            self?.start(operation, expecting: .renewingBody, bodyStream: stream)
        }
    }

    // MARK: CurlTransferDelegate (loop thread)

    func transfer(_ transfer: CurlTransfer, didReceiveHead head: CurlResponseHead) {}

    func transfer(_ transfer: CurlTransfer, didReceive bytes: UnsafeRawBufferPointer) -> Bool {
        switch lock.withLock({ operation }) {
        case .list:
            return receiveListing(bytes)
        case .probe:
            // libcurl writes what it learned ("Content-Length: …", "Last-Modified: …") as the body of
            // a transfer without one; the probe reads the same from CURLINFO instead.
            return true
        case .download, .upload:
            if !load.responseDelivered { deliverDownloadResponse(transfer) }
            return load.deliverBody(bytes, to: self)
        }
    }

    func transfer(_ transfer: CurlTransfer, didSend totalBytesSent: Int64, of expected: Int64) {
        load.reportUpload(totalBytesSent: totalBytesSent, expected: expected, to: self)
    }

    func transfer(_ transfer: CurlTransfer, didFinishWith result: CURLcode) {
        guard let ended = load.end(transfer, for: self) else { return }
        let (operation, login, accepted) = lock.withLock { (self.operation, self.login, acceptedServer != nil) }
        if result == CURLE_OK { login?.succeeded(environment: environment) }
        let facts = FTPTransferOutcome.Facts(
            result: result, operation: operation, url: request.url, responseDelivered: ended.responseDelivered,
            replyCode: transfer.info(long: CURLINFO_RESPONSE_CODE) ?? 0, reply: transfer.lastServerReply,
            errorDetail: transfer.errorDetail, serverTrustAccepted: accepted,
            remoteSize: transfer.info(offset: CURLINFO_CONTENT_LENGTH_DOWNLOAD_T).flatMap { $0 >= 0 ? $0 : nil },
            remoteModificationTime: transfer.info(offset: CURLINFO_FILETIME_T), resume: ResumeRequest.parameters(of: request),
            rangeStart: RangeStartOffset.of(request).flatMap { try? $0.get() })
        carryOut(FTPTransferOutcome.decide(facts), operation: operation, transfer: transfer, delivered: ended.responseDelivered)
    }

    /// Does what `outcome` says, from `deciding`.
    private func carryOut(_ outcome: FTPTransferOutcome, operation: FTPOperation, transfer: CurlTransfer, delivered: Bool) {
        switch outcome {
        case .downloadAfterProbe(let resume):
            lock.withLock { confirmedResume = resume }
            start(.download(offset: resume?.offset ?? 0), expecting: .deciding)
        case .finishDownload:
            if !delivered { deliverDownloadResponse(transfer) }
            load.finish(for: self, from: .deciding)
        case .finishListing:
            finishListing(delivered: delivered)
        case .finishUpload:
            guard load.conclude(from: .deciding) else { return }
            let response = URLResponse(url: request.url ?? URL(fileURLWithPath: "/"), mimeType: nil,
                                       expectedContentLength: 0, textEncodingName: nil)
            client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
            client?.urlProtocolDidFinishLoading(self)
        case .listWithoutMLSD:
            if let url = request.url { FTPServerFeatures.shared(in: environment)?.recordLacksMLSD(url) }
            start(.list(machineReadable: false), expecting: .deciding)
        case .downloadFromStart:
            lock.withLock { confirmedResume = nil }
            start(.download(offset: 0), expecting: .deciding)
        case .downloadFromRangeStart(let offset):
            lock.withLock { confirmedResume = nil }
            start(.download(offset: offset), expecting: .deciding)
        case .loginChallenge(let error):
            presentLoginChallenge(error: error, operation: operation)
        case .serverTrustChallenge(let error):
            presentTrustChallenge(error: error, detail: transfer.errorDetail, operation: operation)
        case .fail(let error):
            load.fail(error, for: self, from: .deciding)
        }
    }

    // MARK: Downloads

    /// The response of a download: size and MIME type, the resume validator, and the resume offset
    /// the probe confirmed.
    private func deliverDownloadResponse(_ transfer: CurlTransfer) {
        guard let url = request.url else { return }
        let remaining = transfer.info(offset: CURLINFO_CONTENT_LENGTH_DOWNLOAD_T).flatMap { $0 >= 0 ? $0 : nil }
        let time = transfer.info(offset: CURLINFO_FILETIME_T)
        let resume = lock.withLock { confirmedResume }
        if let builtIn = builtInClient {
            if let resume {
                builtIn.setResumeValidator(FTPResumeValidator.make(size: resume.total, modificationTime: time) ?? "")
                builtIn.didResume(atOffset: resume.offset, expectedTotalBytes: resume.total)
            } else if let validator = FTPResumeValidator.make(size: remaining, modificationTime: time) {
                builtIn.setResumeValidator(validator)
            }
        }
        let response = URLResponse(url: url, mimeType: MIMETypeTable.mimeType(forPathExtension: url.pathExtension),
                                   expectedContentLength: remaining.map { Int($0) } ?? -1, textEncodingName: nil)
        load.respond(with: response, policy: .notAllowed, to: self)
    }

    // MARK: Listings

    /// Parses a piece of the listing and delivers the entries it completes, unless the consumer
    /// cannot take more now (libcurl pauses and hands the same bytes again later). A reply past the
    /// caps fails the load and takes the transfer off the loop.
    private func receiveListing(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if !load.responseDelivered { deliverListingResponse() }
        guard load.mayDeliver(to: self) else { return false }
        let url = request.url
        let parsed: Result<Data, URLError>? = lock.withLock {
            guard var stream = listing else { return nil }
            defer { listing = stream }
            do throws(URLError) {
                return .success(try stream.consume(bytes, url: url))
            } catch {
                return .failure(error)
            }
        }
        switch parsed {
        case .success(let body):
            if !body.isEmpty { load.deliver(body, to: self) }
        case .failure(let error):
            load.fail(error, for: self, from: .running)
        case nil:
            break
        }
        return true
    }

    /// Delivers the last line (one without a line break) and ends the load.
    private func finishListing(delivered: Bool) {
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
        if !delivered { deliverListingResponse() }
        switch tail {
        case .success(let body):
            if !body.isEmpty { load.deliver(body, to: self) }
            load.finish(for: self, from: .deciding)
        case .failure(let error):
            load.fail(error, for: self, from: .deciding)
        }
    }

    /// The response of a listing: its MIME type, length unknown (it streams).
    private func deliverListingResponse() {
        guard let url = request.url else { return }
        let response = URLResponse(url: url, mimeType: URLDirectoryListing.mimeType,
                                   expectedContentLength: -1, textEncodingName: "utf-8")
        load.respond(with: response, policy: .notAllowed, to: self)
    }

    // MARK: Challenges

    private func presentLoginChallenge(error: URLError, operation: FTPOperation) {
        guard load.wait(.challenging, from: .deciding) else { return }
        guard let login = lock.withLock({ self.login }) else {
            load.fail(error, for: self, from: .challenging)
            return
        }
        let sender = HandlerChallengeSender { [weak self] answer in
            guard let self else { return }
            switch login.resolve(answer, refusal: error, environment: environment) {
            case .retry: retryAfterChallenge(operation)
            case .fail(let failure): load.fail(failure, for: self, from: .challenging)
            }
        }
        client?.urlProtocol(self, didReceive: login.makeChallenge(error: error, sender: sender))
    }

    private func presentTrustChallenge(error: URLError, detail: String?, operation: FTPOperation) {
        guard let url = request.url, load.wait(.challenging, from: .deciding) else { return }
        TLSServerTrustChallenge.present(
            for: url, error: error, detail: detail, environment: environment, timeout: configuration.requestTimeout,
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
                    load.fail(failure, for: self, from: .challenging)
                }
            })
    }
}
