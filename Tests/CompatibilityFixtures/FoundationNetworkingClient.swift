#if USE_FOUNDATION_NETWORKING
import FoundationNetworking
#else
import Courier
#endif
import Foundation

// A program written against FoundationNetworking, the way people write one: it must type-check
// unchanged against Courier. `scripts/check-source-compatibility` compiles it both ways with
// `swiftc -typecheck`; it is never run. It uses only what FoundationNetworking declares (no
// `bytes(for:)`), and avoids FoundationNetworking's deprecated API so that both builds are quiet.
// WebSocket tasks have their own program, FoundationNetworkingWebSocketClient.swift; stream tasks
// theirs, FoundationNetworkingStreams.swift.

// MARK: - A small API client with completion handlers

/// The errors the client reports to its callers.
enum ClientError: Error {
    case transport(URLError)
    case status(Int, body: Data)
    case undecodable
}

struct Repository: Decodable, Sendable {
    let name: String
    let stars: Int
}

final class APIClient: Sendable {
    let session: URLSession
    let baseURL: URL

    init(baseURL: URL, session: URLSession = .shared) {
        self.baseURL = baseURL
        self.session = session
    }

    func makeRequest(path: String, method: String = "GET", body: Data? = nil) -> URLRequest {
        var request = URLRequest(url: baseURL.appendingPathComponent(path),
                                 cachePolicy: .reloadIgnoringLocalCacheData,
                                 timeoutInterval: 30)
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.addValue("gzip", forHTTPHeaderField: "Accept-Encoding")
        request.addValue("deflate", forHTTPHeaderField: "Accept-Encoding")
        request.httpBody = body
        request.allowsCellularAccess = false
        request.httpShouldHandleCookies = true
        request.networkServiceType = .voice
        request.mainDocumentURL = baseURL
        if request.value(forHTTPHeaderField: "Accept") == nil {
            request.allHTTPHeaderFields = ["Accept": "*/*"]
        }
        return request
    }

    @discardableResult
    func repository(named name: String, completion: @escaping @Sendable (Result<Repository, ClientError>) -> Void) -> URLSessionDataTask {
        let task = session.dataTask(with: makeRequest(path: "repos/\(name)")) { data, response, error in
            if let error = error as? URLError {
                completion(.failure(.transport(error)))
                return
            }
            guard let http = response as? HTTPURLResponse, let data else {
                completion(.failure(.undecodable))
                return
            }
            guard (200..<300).contains(http.statusCode) else {
                completion(.failure(.status(http.statusCode, body: data)))
                return
            }
            let contentType = http.value(forHTTPHeaderField: "Content-Type") ?? http.mimeType ?? "?"
            _ = http.allHeaderFields["Content-Length"] as? String
            _ = contentType
            do {
                completion(.success(try JSONDecoder().decode(Repository.self, from: data)))
            } catch {
                completion(.failure(.undecodable))
            }
        }
        task.taskDescription = "repository \(name)"
        task.priority = URLSessionTask.highPriority
        task.resume()
        return task
    }

    func statusCode(of url: URL, completion: @escaping @Sendable (Int?) -> Void) {
        session.dataTask(with: url) { _, response, _ in
            completion((response as? HTTPURLResponse)?.statusCode)
        }.resume()
    }

    func upload(_ body: Data, to path: String, completion: @escaping @Sendable (Error?) -> Void) {
        let request = makeRequest(path: path, method: "POST")
        session.uploadTask(with: request, from: body) { _, _, error in completion(error) }.resume()
        session.uploadTask(with: request, from: nil) { _, _, error in completion(error) }.resume()
    }

    func upload(file: URL, to path: String, completion: @escaping @Sendable (Error?) -> Void) {
        session.uploadTask(with: makeRequest(path: path, method: "PUT"), fromFile: file) { data, response, error in
            _ = (data?.count, response?.expectedContentLength)
            completion(error)
        }.resume()
    }

    func download(_ url: URL, to destination: URL, completion: @escaping @Sendable (Result<URL, Error>) -> Void) {
        let task = session.downloadTask(with: url) { location, response, error in
            if let error {
                let resumeData = (error as NSError).userInfo[URLSessionDownloadTaskResumeData] as? Data
                _ = resumeData
                completion(.failure(error))
                return
            }
            guard let location else { return }
            do {
                try? FileManager.default.removeItem(at: destination)
                try FileManager.default.moveItem(at: location, to: destination)
                _ = response?.suggestedFilename
                completion(.success(destination))
            } catch {
                completion(.failure(error))
            }
        }
        task.resume()
    }

    func downloads() {
        let request = URLRequest(url: baseURL)
        session.downloadTask(with: request) { _, _, _ in }.resume()
        session.downloadTask(with: request).resume()
        session.downloadTask(with: baseURL).resume()
        session.dataTask(with: request).resume()
        session.dataTask(with: baseURL).resume()
        session.uploadTask(with: request, fromFile: baseURL).resume()
        session.uploadTask(with: request, from: Data()).resume()
        session.uploadTask(withStreamedRequest: request).resume()
    }

    func pausableDownload(_ url: URL, completion: @escaping @Sendable (Data?) -> Void) {
        let task = session.downloadTask(with: url)
        task.resume()
        task.cancel(byProducingResumeData: { resumeData in
            completion(resumeData)
        })
    }

    func resume(from resumeData: Data) {
        session.downloadTask(withResumeData: resumeData).resume()
        session.downloadTask(withResumeData: resumeData) { location, _, _ in _ = location }.resume()
    }
}

// MARK: - async/await

func fetchAll(client: APIClient, names: [String]) async throws -> [Repository] {
    var repositories: [Repository] = []
    for name in names {
        let (data, response) = try await URLSession.shared.data(from: client.baseURL.appendingPathComponent(name))
        guard let http = response as? HTTPURLResponse, http.statusCode == 200 else {
            throw ClientError.status((response as? HTTPURLResponse)?.statusCode ?? -1, body: data)
        }
        repositories.append(try JSONDecoder().decode(Repository.self, from: data))
    }
    return repositories
}

func asyncSurface(client: APIClient, delegate: TaskObserver) async {
    let request = client.makeRequest(path: "upload", method: "POST")
    do {
        let (data, response) = try await client.session.data(for: request)
        let (data2, _) = try await client.session.data(for: request, delegate: delegate)
        let (data3, _) = try await client.session.data(from: client.baseURL, delegate: nil)
        let (uploaded, _) = try await client.session.upload(for: request, from: Data("hi".utf8))
        let (fromFile, _) = try await client.session.upload(for: request, fromFile: URL(fileURLWithPath: "/tmp/x"), delegate: delegate)
        let (location, downloadResponse) = try await client.session.download(for: request)
        let (location2, _) = try await client.session.download(from: client.baseURL, delegate: delegate)
        print(data.count, response.url as Any, data2, data3, uploaded, fromFile, location, location2,
              downloadResponse.mimeType as Any)
    } catch let error as URLError {
        switch error.code {
        case .timedOut:
            print("timed out: \(error.failingURL?.absoluteString ?? "?")")
        case .notConnectedToInternet, .networkConnectionLost, .cannotConnectToHost:
            print("offline")
        case .cancelled:
            break
        default:
            print("transport error \(error.code.rawValue): \(error.localizedDescription)")
        }
        if error.code == .timedOut { print("retry later") }
    } catch {
        print("other error: \(error)")
    }
}

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

/// A delegate that only cares about completion and relies on the protocols' default methods.
final class CompletionOnlyDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        print(task.state == .completed, error as Any)
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

// MARK: - Sessions and configurations

func makeSessions(observer: TaskObserver) -> [URLSession] {
    let configuration = URLSessionConfiguration.default
    configuration.identifier = nil
    configuration.requestCachePolicy = .returnCacheDataElseLoad
    configuration.timeoutIntervalForRequest = 15
    configuration.timeoutIntervalForResource = 120
    configuration.networkServiceType = .background
    configuration.allowsCellularAccess = true
    configuration.isDiscretionary = false
    configuration.connectionProxyDictionary = nil
    configuration.httpShouldSetCookies = true
    configuration.httpCookieAcceptPolicy = .onlyFromMainDocumentDomain
    configuration.httpAdditionalHeaders = ["User-Agent": "Client/1.0", "X-Trace": 1]
    configuration.httpMaximumConnectionsPerHost = 4
    configuration.httpCookieStorage = HTTPCookieStorage.shared
    configuration.urlCredentialStorage = URLCredentialStorage.shared
    configuration.urlCache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
    configuration.protocolClasses = [StubProtocol.self, TaskStubProtocol.self] + (configuration.protocolClasses ?? [])
    print(configuration.sharedContainerIdentifier as Any)

    let ephemeral = URLSessionConfiguration.ephemeral
    let copy = ephemeral.copy() as! URLSessionConfiguration
    _ = ephemeral.copy(with: nil)

    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 1
    let delegating = URLSession(configuration: configuration, delegate: observer, delegateQueue: queue)
    delegating.sessionDescription = "delegating"
    let plain = URLSession(configuration: copy)
    let noDelegate = URLSession(configuration: .default, delegate: nil, delegateQueue: nil)
    print(delegating.delegate as Any, delegating.delegateQueue, delegating.configuration.timeoutIntervalForRequest)
    return [delegating, plain, noDelegate, URLSession.shared]
}

/// Mocking by subclassing, as many test suites do.
final class RecordingSession: URLSession, @unchecked Sendable {
    private let lock = NSLock()
    private var requested: [URL] = []

    init() {
        super.init(configuration: .ephemeral)
    }

    override func dataTask(with request: URLRequest, completionHandler: @escaping @Sendable (Data?, URLResponse?, Error?) -> Void) -> URLSessionDataTask {
        if let url = request.url { lock.withLock { requested.append(url) } }
        return super.dataTask(with: request, completionHandler: completionHandler)
    }

    override var delegateQueue: OperationQueue { OperationQueue.main }
}

/// A task subclass for tests that never touches the network.
final class ImmediateDataTask: URLSessionDataTask, @unchecked Sendable {
    private let onResume: @Sendable () -> Void

    init(onResume: @escaping @Sendable () -> Void) {
        self.onResume = onResume
        super.init()
    }

    override func resume() { onResume() }
    override func cancel() {}
}

func manage(sessions: [URLSession]) {
    for session in sessions {
        session.getTasksWithCompletionHandler { data, uploads, downloads in
            for task in data + uploads { task.cancel() }
            for download in downloads { download.suspend() }
        }
        session.getAllTasks { tasks in print(tasks.count) }
        session.flush { print("flushed") }
        session.reset { print("reset") }
    }
    sessions.first?.finishTasksAndInvalidate()
    sessions.last?.invalidateAndCancel()
}

func inspect(task: URLSessionTask) {
    let description: String
    switch task.state {
    case .running: description = "running"
    case .suspended: description = "suspended"
    case .canceling: description = "canceling"
    case .completed: description = "completed"
    }
    let reporter: ProgressReporting = task
    task.delegate = CompletionOnlyDelegate()
    task.countOfBytesClientExpectsToSend = 1024
    task.countOfBytesClientExpectsToReceive = NSURLSessionTransferSizeUnknown
    if task.priority < URLSessionTask.defaultPriority { task.priority = URLSessionTask.lowPriority }
    print(description, reporter.progress.totalUnitCount, task.taskIdentifier, task.originalRequest as Any,
          task.currentRequest as Any, task.response as Any, task.error as Any, task.taskDescription as Any,
          task.countOfBytesReceived, task.countOfBytesSent, task.countOfBytesExpectedToSend,
          task.countOfBytesExpectedToReceive, task.copy())
    if let upload = task as? URLSessionUploadTask { print("upload", upload) }
    task.suspend()
    task.resume()
}

// MARK: - Cookies, credentials, cache

func cookies() {
    let url = URL(string: "https://example.com/account")!
    let properties: [HTTPCookiePropertyKey: Any] = [
        .name: "session", .value: "abc123", .domain: "example.com", .path: "/", .secure: "TRUE",
        .expires: Date(timeIntervalSinceNow: 3600), .version: "0", .comment: "login", .commentURL: url,
        .discard: "FALSE", .maximumAge: "3600", .port: "443", .originURL: url,
        HTTPCookiePropertyKey("HttpOnly"): "TRUE", HTTPCookiePropertyKey(rawValue: "SameSite"): "Lax",
    ]
    guard let cookie = HTTPCookie(properties: properties) else { return }
    print(cookie.name, cookie.value, cookie.domain, cookie.path, cookie.isSecure, cookie.isHTTPOnly,
          cookie.isSessionOnly, cookie.expiresDate as Any, cookie.version, cookie.comment as Any,
          cookie.commentURL as Any, cookie.portList as Any, cookie.properties?[.name] as Any)
    let fromHeaders = HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": "a=b; Path=/"], for: url)
    let header = HTTPCookie.requestHeaderFields(with: fromHeaders + [cookie])["Cookie"]

    let storage = HTTPCookieStorage.shared
    storage.cookieAcceptPolicy = .always
    storage.setCookie(cookie)
    storage.setCookies(fromHeaders, for: url, mainDocumentURL: nil)
    let matching = storage.cookies(for: url) ?? []
    let sorted = storage.sortedCookies(using: [NSSortDescriptor(keyPath: \HTTPCookie.name, ascending: true)])
    for stale in storage.cookies ?? [] where stale.expiresDate.map({ $0 < Date() }) ?? false {
        storage.deleteCookie(stale)
    }
    storage.removeCookies(since: Date(timeIntervalSinceNow: -60))
    let group = HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: "group.example")
    let observer = NotificationCenter.default.addObserver(forName: .NSHTTPCookieManagerCookiesChanged, object: storage,
                                                          queue: nil) { _ in print("cookies changed") }
    NotificationCenter.default.removeObserver(observer)
    let policy: HTTPCookie.AcceptPolicy = group.cookieAcceptPolicy == .never ? .onlyFromMainDocumentDomain : .never
    print(header as Any, matching.count, sorted.count, policy)
}

func credentials(task: URLSessionTask) {
    let space = URLProtectionSpace(host: "example.com", port: 443, protocol: NSURLProtectionSpaceHTTPS,
                                   realm: "api", authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
    let proxy = URLProtectionSpace(proxyHost: "proxy.local", port: 1080, type: NSURLProtectionSpaceSOCKSProxy,
                                   realm: nil, authenticationMethod: NSURLAuthenticationMethodNegotiate)
    print(space.host, space.port, space.protocol as Any, space.realm as Any, space.authenticationMethod,
          space.receivesCredentialSecurely, space.isProxy(), proxy.proxyType as Any, space.copy(),
          [NSURLProtectionSpaceHTTP, NSURLProtectionSpaceHTTPSProxy, NSURLAuthenticationMethodHTMLForm,
           NSURLAuthenticationMethodNTLM, NSURLCredentialStorageRemoveSynchronizableCredentials])

    let credential = URLCredential(user: "me", password: "secret", persistence: .permanent)
    let persistence: URLCredential.Persistence = credential.persistence == .none ? .forSession : credential.persistence
    print(credential.user as Any, credential.password as Any, credential.hasPassword, persistence, credential.copy())

    let storage = URLCredentialStorage.shared
    storage.set(credential, for: space)
    storage.setDefaultCredential(credential, for: space)
    let forSpace = storage.credentials(for: space)?["me"]
    let all = storage.allCredentials.count
    let preferred = storage.defaultCredential(for: space)
    storage.remove(credential, for: space)
    storage.remove(credential, for: space, options: [NSURLCredentialStorageRemoveSynchronizableCredentials: NSNumber(value: true)])

    storage.set(credential, for: space, task: task)
    storage.setDefaultCredential(credential, for: space, task: task)
    storage.getCredentials(for: space, task: task) { byUser in print(byUser?.keys.sorted() ?? []) }
    storage.getDefaultCredential(for: space, task: task) { credential in print(credential?.user as Any) }
    storage.remove(credential, for: space, task: task)
    storage.remove(credential, for: space, options: nil, task: task)

    let isolated = URLCredentialStorage()
    let token = NotificationCenter.default.addObserver(forName: .NSURLCredentialStorageChanged, object: isolated,
                                                       queue: .main) { _ in print("credentials changed") }
    NotificationCenter.default.removeObserver(token)
    print(forSpace as Any, all, preferred as Any)
}

/// A cache that refuses large bodies, overriding both store methods.
final class SmallBodyCache: URLCache, @unchecked Sendable {
    override func storeCachedResponse(_ cachedResponse: CachedURLResponse, for request: URLRequest) {
        guard cachedResponse.data.count < 64 * 1024 else { return }
        super.storeCachedResponse(cachedResponse, for: request)
    }

    override func storeCachedResponse(_ cachedResponse: CachedURLResponse, for dataTask: URLSessionDataTask) {
        guard cachedResponse.data.count < 64 * 1024 else { return }
        super.storeCachedResponse(cachedResponse, for: dataTask)
    }

    override func getCachedResponse(for dataTask: URLSessionDataTask, completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void) {
        super.getCachedResponse(for: dataTask, completionHandler: completionHandler)
    }
}

func caching(task: URLSessionDataTask) {
    let url = URL(string: "https://example.com/data.json")!
    let request = URLRequest(url: url, cachePolicy: .returnCacheDataDontLoad)
    let response = URLResponse(url: url, mimeType: "application/json", expectedContentLength: 2, textEncodingName: nil)
    let cached = CachedURLResponse(response: response, data: Data("{}".utf8))
    let detailed = CachedURLResponse(response: response, data: Data("{}".utf8), userInfo: nil, storagePolicy: .allowedInMemoryOnly)
    print(cached.response.url as Any, cached.data.count, cached.userInfo as Any, detailed.storagePolicy, cached.copy())

    let cache = SmallBodyCache(memoryCapacity: 4 << 20, diskCapacity: 16 << 20, diskPath: "client-cache")
    URLCache.shared = cache
    cache.storeCachedResponse(cached, for: request)
    cache.storeCachedResponse(detailed, for: task)
    if let hit = URLCache.shared.cachedResponse(for: request) { print("hit", hit.data.count) }
    cache.getCachedResponse(for: task) { response in print(response?.storagePolicy as Any) }
    cache.removeCachedResponse(for: request)
    cache.removeCachedResponse(for: task)
    cache.removeCachedResponses(since: Date(timeIntervalSinceNow: -3600))
    cache.removeAllCachedResponses()
    cache.memoryCapacity = 8 << 20
    cache.diskCapacity = 0
    print(cache.currentMemoryUsage, cache.currentDiskUsage)
}

// MARK: - Requests and responses

func requestsAndResponses() {
    let url = URL(string: "https://example.com/items?page=2")!
    var request = URLRequest(url: url)
    request.url = url
    request.cachePolicy = .reloadIgnoringLocalAndRemoteCacheData
    request.timeoutInterval = 10
    request.httpBodyStream = InputStream(data: Data())
    let policies: [URLRequest.CachePolicy] = [.useProtocolCachePolicy, .reloadIgnoringLocalCacheData,
                                              .reloadIgnoringCacheData, .returnCacheDataElseLoad,
                                              .returnCacheDataDontLoad, .reloadRevalidatingCacheData]
    let services: [URLRequest.NetworkServiceType] = [.default, .voip, .video, .background, .voice,
                                                     .networkServiceTypeCallSignaling]
    var seen = Set<URLRequest>()
    seen.insert(request)
    print(request == URLRequest(url: url), request.description, request.debugDescription, request.customMirror.children.count,
          policies.map(\.rawValue), services.count, request.cachePolicy, request.timeoutInterval,
          request.httpBody as Any, request.httpMethod as Any, request.allHTTPHeaderFields as Any)

    let legacy = NSMutableURLRequest(url: url, cachePolicy: .useProtocolCachePolicy, timeoutInterval: 5)
    legacy.httpMethod = "PATCH"
    legacy.setValue("1", forHTTPHeaderField: "X-One")
    legacy.addValue("2", forHTTPHeaderField: "X-One")
    legacy.httpBody = Data("{}".utf8)
    legacy.allowsCellularAccess = false
    legacy.httpShouldHandleCookies = false
    legacy.mainDocumentURL = url
    legacy.timeoutInterval = 8
    legacy.networkServiceType = .video
    let immutable = legacy.copy() as! NSURLRequest
    let bridged = immutable as URLRequest
    let plain = NSURLRequest(url: url)
    print(immutable.url as Any, immutable.httpMethod as Any, immutable.value(forHTTPHeaderField: "X-One") as Any,
          bridged.httpMethod as Any, plain.cachePolicy, plain.timeoutInterval, immutable.allHTTPHeaderFields as Any,
          immutable.httpBody as Any, immutable.httpBodyStream as Any, immutable.mainDocumentURL as Any,
          immutable.networkServiceType, immutable.allowsCellularAccess, immutable.httpShouldHandleCookies,
          plain.mutableCopy(), NSURLRequest.supportsSecureCoding)

    let response = URLResponse(url: url, mimeType: "text/html", expectedContentLength: -1, textEncodingName: "utf-8")
    print(response.url as Any, response.mimeType as Any, response.expectedContentLength, response.textEncodingName as Any,
          response.suggestedFilename as Any, URLResponse.supportsSecureCoding, response.copy())
    if let http = HTTPURLResponse(url: url, statusCode: 404, httpVersion: "HTTP/1.1", headerFields: ["Content-Length": "0"]) {
        let reason = HTTPURLResponse.localizedString(forStatusCode: http.statusCode)
        print(reason, http.allHeaderFields.count, http.value(forHTTPHeaderField: "content-length") as Any)
        let generic: URLResponse = http
        if let status = (generic as? HTTPURLResponse)?.statusCode, status == 404 { print("not found") }
    }
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
struct FoundationNetworkingClient {
    static func main() async {
        let observer = TaskObserver()
        let sessions = makeSessions(observer: observer)
        let client = APIClient(baseURL: URL(string: "https://api.example.com")!, session: sessions[0])
        client.repository(named: "swift") { result in
            switch result {
            case .success(let repository): print(repository.name, repository.stars)
            case .failure(.transport(let error)) where error.code == .timedOut: print("timed out")
            case .failure(let error): print(error)
            }
        }
        client.statusCode(of: client.baseURL) { print($0 as Any) }
        client.upload(Data("x".utf8), to: "files") { print($0 as Any) }
        client.upload(file: URL(fileURLWithPath: "/etc/hostname"), to: "files") { print($0 as Any) }
        client.download(client.baseURL, to: URL(fileURLWithPath: "/tmp/out")) { print($0) }
        client.pausableDownload(client.baseURL) { data in if let data { client.resume(from: data) } }
        client.downloads()
        do {
            let repositories = try await fetchAll(client: client, names: ["a", "b"])
            print(repositories.count)
        } catch let error as URLError where error.code == .timedOut {
            print("timed out")
        } catch {
            print(error)
        }
        await asyncSurface(client: client, delegate: observer)

        let task = sessions[1].dataTask(with: client.baseURL)
        inspect(task: task)
        inspect(task: ImmediateDataTask { print("resumed") })
        credentials(task: task)
        caching(task: task)
        cookies()
        requestsAndResponses()
        dispositions()
        exerciseProtocolsDirectly()
        print(RecordingSession().configuration.timeoutIntervalForResource)
        manage(sessions: sessions)
    }
}
