import Foundation

/// The handler for `sftp:` URLs, on libssh2.
///
/// - A URL naming a file downloads it: the response carries the file's size and a MIME type from
///   its name, the body streams (pausing while the consumer lags), and a download task resumed from
///   resume data continues at its offset when the file's size and modification time are unchanged.
/// - A URL ending in `/` lists the directory (``URLDirectoryListing``).
/// - An upload task (a body from memory, a file or a stream) writes the file, replacing it — or
///   continuing it, with ``URLRequest/sftpResumesUpload``.
///
/// Loads run on the session's ``SSHEventLoop``; loads for the same host, port and user share one
/// SSH connection, each on its own SFTP channel. Server host keys are checked against the known-hosts
/// files (``URLSessionConfiguration/sshKnownHostsURL``, ``SSHHostKeyVerification``): an unknown key
/// raises an `NSURLAuthenticationMethodSSHHostKey` challenge (or is recorded, with `.acceptNew`); a
/// changed or revoked key is refused. Authentication (``SSHAuthentication``) uses the
/// URL's password, the credential storage, the ssh-agent and `~/.ssh` keys, then asks the delegate
/// (protection space protocol `"sftp"`).
///
/// Errors: no such file → `fileDoesNotExist`, permission denied → `noPermissionsToReadFile`, no
/// credential accepted → `userAuthenticationRequired`, an untrusted host key →
/// `serverCertificateUntrusted`, refused, lost or timed-out connections as for HTTP.
final class SFTPURLProtocol: BuiltInURLProtocol, @unchecked Sendable {

    private let lock = Lock()
    private var job: SFTPJob?
    private var loop: SSHEventLoop?
    private var stopped = false

    override class func canInit(with request: URLRequest) -> Bool {
        guard request.url?.scheme?.lowercased() == "sftp" else { return false }
        return !(request.url?.host ?? "").isEmpty
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    private var builtInClient: BuiltInHandlerClient? { client as? BuiltInHandlerClient }

    override func startLoading() {
        guard let url = request.url else { return }
        guard let key = SSHConnectionKey(url: url), let path = SFTPRemotePath.path(of: url) else {
            client?.urlProtocol(self, didFailWithError: URLError(.badURL, url: url, description: "The sftp: URL has no usable host or path."))
            return
        }
        let environment = builtInClient?.environment ?? .standalone()
        guard let loop = SSHEventLoop.shared(in: environment) else {
            client?.urlProtocol(self, didFailWithError: URLError(.cannotLoadFromNetwork, url: url,
                                                                 description: "libssh2 could not be initialised, or the session was invalidated."))
            return
        }
        let job: SFTPJob
        if let body = makeBody(loop: loop, url: url) {
            guard !url.hasDirectoryPath else {
                body.close()
                client?.urlProtocol(self, didFailWithError: URLError(.fileIsDirectory, url: url,
                                                                     description: "Cannot upload to a directory URL (it ends in \"/\")."))
                return
            }
            job = SFTPUpload(url: url, path: path, key: key, handler: self, body: body, resumes: request.sftpResumesUpload)
        } else if url.hasDirectoryPath {
            job = SFTPListing(url: url, path: path, key: key, handler: self, caps: environment.listingCaps)
        } else {
            let start: Int64?
            switch RangeStartOffset.of(request) {
            case .failure(let error)?:
                client?.urlProtocol(self, didFailWithError: error)
                return
            case .success(let offset)?: start = offset
            case nil: start = nil
            }
            job = SFTPDownload(url: url, path: path, key: key, handler: self, resume: ResumeRequest.parameters(of: request),
                               rangeStart: start)
        }
        let proceed: Bool = lock.withLock {
            guard !stopped else { return false }
            self.job = job
            self.loop = loop
            return true
        }
        guard proceed else {
            job.discard()
            return
        }
        if !loop.submit(job) {
            job.discard()
            client?.urlProtocol(self, didFailWithError: URLError(.cancelled, url: url, description: "The session was invalidated."))
        }
    }

    /// The upload body the request carries (an upload task's data, file or stream), if any.
    private func makeBody(loop: SSHEventLoop, url: URL) -> SFTPUploadBody? {
        if let data = request.httpBody { return SFTPUploadBody(data: data) }
        guard let stream = request.httpBodyStream else { return nil }
        let length = request.value(forHTTPHeaderField: "Content-Length").flatMap { Int64($0) }
        return SFTPUploadBody(stream: stream, length: length, url: url) { [weak loop] in loop?.wake() }
    }

    override func stopLoading() {
        let (job, loop): (SFTPJob?, SSHEventLoop?) = lock.withLock {
            stopped = true
            defer { self.job = nil; self.loop = nil }
            return (self.job, self.loop)
        }
        if let job, let loop { loop.cancel(job) }
    }

    override func resumeProducing() {
        let loop = lock.withLock { stopped ? nil : self.loop }
        loop?.wake()
    }

    // MARK: Reports from the job (event-loop thread)

    /// How long a new SSH connection for this load may take to set up: the load's idle timeout
    /// (``HandlerConfiguration/requestTimeout``), 60 s when it has none.
    var setupTimeout: TimeInterval {
        let timeout = builtInClient?.configuration.requestTimeout ?? 60
        return timeout > 0 ? timeout : 60
    }

    var canAcceptMoreDataFromJob: Bool {
        builtInClient?.canAcceptMoreData ?? true
    }

    func jobDidReceive(_ response: URLResponse) {
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
    }

    func jobDidLoad(_ data: Data) {
        client?.urlProtocol(self, didLoad: data)
    }

    func jobDidFinish() {
        client?.urlProtocolDidFinishLoading(self)
    }

    func jobDidFail(_ error: URLError) {
        client?.urlProtocol(self, didFailWithError: error)
    }

    func jobDidSendBodyData(_ bytesSent: Int64, totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {
        builtInClient?.didSendBodyData(bytesSent, totalBytesSent: totalBytesSent, totalBytesExpectedToSend: totalBytesExpectedToSend)
    }

    func jobDidResume(atOffset offset: Int64, expectedTotalBytes: Int64) {
        builtInClient?.didResume(atOffset: offset, expectedTotalBytes: expectedTotalBytes)
    }

    func jobSetResumeValidator(_ validator: String) {
        builtInClient?.setResumeValidator(validator)
    }

    func jobDidCollect(_ metrics: SFTPTransferMetrics) {
        builtInClient?.didCollectTransactionMetrics { metrics.apply(to: &$0) }
    }

    /// Raises a challenge for the connection this load waits on; `answer` gets the delegate's decision.
    func presentChallenge(space: URLProtectionSpace, proposed: URLCredential?, failureCount: Int, error: URLError?,
                          answer: @escaping @Sendable (HandlerChallengeSender.Answer) -> Void) {
        let sender = HandlerChallengeSender(respond: answer)
        let challenge = URLAuthenticationChallenge(protectionSpace: space, proposedCredential: proposed,
                                                   previousFailureCount: failureCount, failureResponse: nil,
                                                   error: error, sender: sender)
        client?.urlProtocol(self, didReceive: challenge)
    }
}
