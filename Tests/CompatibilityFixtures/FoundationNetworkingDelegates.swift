#if USE_FOUNDATION_NETWORKING
import FoundationNetworking
#else
import Courier
#endif
import Foundation

// A program written against FoundationNetworking's delegate protocols and URLProtocol, the way
// people write one: a delegate implementing every delegate method, URLProtocol subclasses and a
// protocol client, and the dispositions delegates answer with. It must type-check unchanged against
// Courier; `scripts/check-source-compatibility` compiles it both ways and never runs it. Sessions and
// tasks are FoundationNetworkingTasks.swift's subject.

// MARK: - A delegate implementing every delegate method

final class TaskObserver: NSObject, URLSessionDataDelegate, URLSessionDownloadDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var buffers: [Int: Data] = [:]
    private var lastMetrics: URLSessionTaskMetrics?

    // URLSessionDelegate
    func urlSession(_ session: URLSession, didBecomeInvalidWithError error: Error?) {
        print("session \(session.sessionDescription ?? "") invalid: \(String(describing: error))")
    }

    func urlSession(_ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        completionHandler(.performDefaultHandling, nil)
    }

    // URLSessionTaskDelegate
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(response.statusCode == 308 ? nil : request)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        let space = challenge.protectionSpace
        guard challenge.previousFailureCount < 3,
              space.authenticationMethod == NSURLAuthenticationMethodHTTPBasic
                || space.authenticationMethod == NSURLAuthenticationMethodHTTPDigest else {
            completionHandler(challenge.previousFailureCount < 3 ? .rejectProtectionSpace : .cancelAuthenticationChallenge, nil)
            return
        }
        if let proposed = challenge.proposedCredential, proposed.hasPassword {
            completionHandler(.useCredential, proposed)
        } else {
            completionHandler(.useCredential, URLCredential(user: "me", password: "secret", persistence: .forSession))
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask,
                    needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void) {
        completionHandler(InputStream(data: Data("body".utf8)))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
                    totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {
        if totalBytesExpectedToSend != NSURLSessionTransferSizeUnknown {
            print("sent \(totalBytesSent)/\(totalBytesExpectedToSend) (+\(bytesSent))")
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        let body = lock.withLock { buffers.removeValue(forKey: task.taskIdentifier) }
        if let error = error as? URLError, error.code == .cancelled { return }
        print("task \(task.taskIdentifier) done: \(body?.count ?? 0) bytes, error \(String(describing: error))")
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willBeginDelayedRequest request: URLRequest,
                    completionHandler: @escaping @Sendable (URLSession.DelayedRequestDisposition, URLRequest?) -> Void) {
        completionHandler(.continueLoading, nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics) {
        lock.withLock { lastMetrics = metrics }
        print("took \(metrics.taskInterval.duration)s, \(metrics.redirectCount) redirects")
        for transaction in metrics.transactionMetrics {
            describe(transaction)
        }
    }

    // URLSessionDataDelegate
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        if let http = response as? HTTPURLResponse, http.statusCode >= 400 {
            completionHandler(.cancel)
        } else {
            completionHandler(.allow)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didBecome downloadTask: URLSessionDownloadTask) {
        print("data task \(dataTask.taskIdentifier) became download \(downloadTask.taskIdentifier)")
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.withLock { buffers[dataTask.taskIdentifier, default: Data()].append(data) }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse,
                    completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void) {
        if proposedResponse.storagePolicy == .allowed, proposedResponse.data.count < 1_000_000 {
            completionHandler(CachedURLResponse(response: proposedResponse.response, data: proposedResponse.data,
                                                userInfo: ["stored": Date()], storagePolicy: .allowedInMemoryOnly))
        } else {
            completionHandler(nil)
        }
    }

    // URLSessionDownloadDelegate
    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        print("downloaded to \(location.path)")
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        print("progress \(downloadTask.progress.fractionCompleted) (\(bytesWritten), \(totalBytesWritten), \(totalBytesExpectedToWrite))")
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64,
                    expectedTotalBytes: Int64) {
        print("resumed at \(fileOffset) of \(expectedTotalBytes)")
    }

    private func describe(_ transaction: URLSessionTaskTransactionMetrics) {
        let request: URLRequest = transaction.request
        let dates: [Date?] = [
            transaction.fetchStartDate, transaction.domainLookupStartDate, transaction.domainLookupEndDate,
            transaction.connectStartDate, transaction.secureConnectionStartDate, transaction.secureConnectionEndDate,
            transaction.connectEndDate, transaction.requestStartDate, transaction.requestEndDate,
            transaction.responseStartDate, transaction.responseEndDate,
        ]
        let counts: [Int64] = [
            transaction.countOfRequestBodyBytesBeforeEncoding, transaction.countOfRequestBodyBytesSent,
            transaction.countOfRequestHeaderBytesSent, transaction.countOfResponseBodyBytesAfterDecoding,
            transaction.countOfResponseBodyBytesReceived, transaction.countOfResponseHeaderBytesReceived,
        ]
        let strings: [String?] = [
            transaction.networkProtocolName, transaction.remoteAddress, transaction.remotePort,
            transaction.localAddress, transaction.localPort,
        ]
        let flags = [transaction.isCellular, transaction.isExpensive, transaction.isConstrained,
                     transaction.isProxyConnection, transaction.isReusedConnection, transaction.isMultipath]
        let suite: tls_ciphersuite_t? = transaction.negotiatedTLSCipherSuite
        let version: tls_protocol_version_t? = transaction.negotiatedTLSProtocolVersion
        let fetchType: URLSessionTaskMetrics.ResourceFetchType = transaction.resourceFetchType
        let resolution: URLSessionTaskMetrics.DomainResolutionProtocol = transaction.domainResolutionProtocol
        switch fetchType {
        case .networkLoad: print("network")
        case .localCache: print("cache")
        default: print("other")
        }
        if suite == .AES_128_GCM_SHA256 || version == .TLSv13 || resolution == .https {
            print("modern TLS")
        }
        print(request.url as Any, transaction.response?.url as Any, dates.compactMap { $0 }.count,
              counts.reduce(0, +), strings.compactMap { $0 }, flags)
    }
}

// MARK: - A URLProtocol subclass overriding everything

final class StubProtocol: URLProtocol {
    static let handledKey = "StubProtocolHandled"
    private let lock = NSLock()
    private var stopped = false

    override class func canInit(with request: URLRequest) -> Bool {
        guard let scheme = request.url?.scheme, scheme == "stub" else { return false }
        return URLProtocol.property(forKey: handledKey, in: request) == nil
    }

    override class func canInit(with task: URLSessionTask) -> Bool {
        guard let request = task.currentRequest ?? task.originalRequest else { return false }
        return canInit(with: request)
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest {
        var canonical = request
        canonical.url = request.url?.standardized
        return canonical
    }

    override class func requestIsCacheEquivalent(_ a: URLRequest, to b: URLRequest) -> Bool {
        a.url == b.url && a.httpMethod == b.httpMethod
    }

    required init(request: URLRequest, cachedResponse: CachedURLResponse?, client: URLProtocolClient?) {
        super.init(request: request, cachedResponse: cachedResponse, client: client)
    }

    override func startLoading() {
        guard let url = request.url else {
            client?.urlProtocol(self, didFailWithError: URLError(.badURL))
            return
        }
        if let cached = cachedResponse {
            client?.urlProtocol(self, cachedResponseIsValid: cached)
            client?.urlProtocolDidFinishLoading(self)
            return
        }
        if url.path == "/redirect" {
            let mutable = (request as NSURLRequest).mutableCopy() as? NSMutableURLRequest
                ?? NSMutableURLRequest(url: url)
            URLProtocol.setProperty(true, forKey: Self.handledKey, in: mutable)
            mutable.url = url.deletingLastPathComponent().appendingPathComponent("target")
            let redirect = HTTPURLResponse(url: url, statusCode: 302, httpVersion: "HTTP/1.1",
                                           headerFields: ["Location": "/target"])
            if let redirect {
                client?.urlProtocol(self, wasRedirectedTo: mutable as URLRequest, redirectResponse: redirect)
            }
            URLProtocol.removeProperty(forKey: Self.handledKey, in: mutable)
            return
        }
        if url.path == "/login" {
            let space = URLProtectionSpace(host: url.host ?? "", port: url.port ?? 443, protocol: NSURLProtectionSpaceHTTPS,
                                           realm: "stub", authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
            let challenge = URLAuthenticationChallenge(protectionSpace: space, proposedCredential: nil, previousFailureCount: 0,
                                                       failureResponse: nil, error: nil, sender: ChallengeSender())
            client?.urlProtocol(self, didReceive: challenge)
            client?.urlProtocol(self, didCancel: challenge)
            return
        }
        let body = Data("stubbed \(task?.taskIdentifier ?? -1)".utf8)
        let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: nil,
                                       headerFields: ["Content-Type": "text/plain; charset=utf-8"])
            ?? URLResponse(url: url, mimeType: "text/plain", expectedContentLength: body.count, textEncodingName: "utf-8")
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: body)
        client?.urlProtocolDidFinishLoading(self)
    }

    override func stopLoading() {
        lock.withLock { stopped = true }
    }
}

/// A task-based protocol: created through `init(task:cachedResponse:client:)`.
final class TaskStubProtocol: URLProtocol {
    override class func canInit(with request: URLRequest) -> Bool { false }
    override class func canInit(with task: URLSessionTask) -> Bool { task is URLSessionDownloadTask }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }
    override func startLoading() { client?.urlProtocolDidFinishLoading(self) }
    override func stopLoading() {}
}

final class ChallengeSender: NSObject, URLAuthenticationChallengeSender {
    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {}
    func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {}
    func cancel(_ challenge: URLAuthenticationChallenge) {}
    func performDefaultHandling(for challenge: URLAuthenticationChallenge) {}
    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {}
}

/// A protocol client that records what a protocol reports, for testing protocols in isolation.
final class RecordingClient: NSObject, URLProtocolClient, @unchecked Sendable {
    private let lock = NSLock()
    private(set) var events: [String] = []

    private func record(_ event: String) { lock.withLock { events.append(event) } }

    func urlProtocol(_ protocol: URLProtocol, wasRedirectedTo request: URLRequest, redirectResponse: URLResponse) {
        record("redirect \(request.url?.absoluteString ?? "")")
    }
    func urlProtocol(_ protocol: URLProtocol, cachedResponseIsValid cachedResponse: CachedURLResponse) {
        record("cached \(cachedResponse.data.count)")
    }
    func urlProtocol(_ protocol: URLProtocol, didReceive response: URLResponse, cacheStoragePolicy policy: URLCache.StoragePolicy) {
        record("response \(response.expectedContentLength) \(policy.rawValue)")
    }
    func urlProtocol(_ protocol: URLProtocol, didLoad data: Data) { record("data \(data.count)") }
    func urlProtocolDidFinishLoading(_ protocol: URLProtocol) { record("finished") }
    func urlProtocol(_ protocol: URLProtocol, didFailWithError error: Error) { record("failed \(error)") }
    func urlProtocol(_ protocol: URLProtocol, didReceive challenge: URLAuthenticationChallenge) {
        record("challenge \(challenge.protectionSpace.host)")
        challenge.sender?.performDefaultHandling(for: challenge)
    }
    func urlProtocol(_ protocol: URLProtocol, didCancel challenge: URLAuthenticationChallenge) { record("cancel challenge") }
}

func exerciseProtocolsDirectly() {
    let client = RecordingClient()
    let request = URLRequest(url: URL(string: "stub://example/item")!)
    let stub = StubProtocol(request: request, cachedResponse: nil, client: client)
    stub.startLoading()
    stub.stopLoading()
    let task = URLSession.shared.downloadTask(with: request)
    let taskProtocol = TaskStubProtocol(task: task, cachedResponse: nil, client: client)
    taskProtocol.startLoading()
    print(client.events, taskProtocol.task === task, taskProtocol.request.url as Any)
    _ = StubProtocol.requestIsCacheEquivalent(request, to: StubProtocol.canonicalRequest(for: request))
    if URLProtocol.registerClass(StubProtocol.self) {
        URLProtocol.unregisterClass(StubProtocol.self)
    }
    let spaceCopy = URLProtectionSpace(proxyHost: "proxy", port: 3128, type: NSURLProtectionSpaceHTTPProxy, realm: nil,
                                       authenticationMethod: NSURLAuthenticationMethodDefault)
    let challenge = URLAuthenticationChallenge(protectionSpace: spaceCopy, proposedCredential: nil, previousFailureCount: 1,
                                               failureResponse: nil, error: URLError(.userAuthenticationRequired),
                                               sender: ChallengeSender())
    let again = URLAuthenticationChallenge(authenticationChallenge: challenge, sender: ChallengeSender())
    print(again.error as Any, again.failureResponse as Any, again.proposedCredential as Any, again.sender as Any)
}

/// A session that tells `observer` everything and loads through the stub protocols first.
func sessionWithStubs(observer: TaskObserver) -> URLSession {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.protocolClasses = [StubProtocol.self, TaskStubProtocol.self] + (configuration.protocolClasses ?? [])
    return URLSession(configuration: configuration, delegate: observer, delegateQueue: OperationQueue())
}

func dispositions() {
    let challenge: [URLSession.AuthChallengeDisposition] = [.useCredential, .performDefaultHandling,
                                                            .cancelAuthenticationChallenge, .rejectProtectionSpace]
    let response: [URLSession.ResponseDisposition] = [.cancel, .allow]
    let delayed: [URLSession.DelayedRequestDisposition] = [.cancel, .continueLoading, .useNewRequest]
    let storage: [URLCache.StoragePolicy] = [.allowed, .allowedInMemoryOnly, .notAllowed]
    let persistence: [URLCredential.Persistence] = [.none, .forSession, .permanent]
    let accept: [HTTPCookie.AcceptPolicy] = [.always, .never, .onlyFromMainDocumentDomain]
    let states: [URLSessionTask.State] = [.running, .suspended, .canceling, .completed]
    let fetch: [URLSessionTaskMetrics.ResourceFetchType] = [.unknown, .networkLoad, .localCache]
    let resolution: [URLSessionTaskMetrics.DomainResolutionProtocol] = [.unknown, .udp, .tcp, .tls, .https]
    let versions: [tls_protocol_version_t] = [.TLSv10, .TLSv11, .TLSv12, .TLSv13, .DTLSv10, .DTLSv12]
    print(challenge.map(\.rawValue), response.map(\.rawValue), delayed.count, storage.map(\.rawValue),
          persistence.map(\.rawValue), accept.map(\.rawValue), states.map(\.rawValue), fetch.map(\.rawValue),
          resolution.map(\.rawValue), versions.map(\.rawValue), tls_ciphersuite_t.RSA_WITH_AES_256_GCM_SHA384.rawValue)
}

// MARK: - Entry point

@main
struct DelegatesProgram {
    static func main() {
        let session = sessionWithStubs(observer: TaskObserver())
        exerciseProtocolsDirectly()
        dispositions()
        print(session)
    }
}
