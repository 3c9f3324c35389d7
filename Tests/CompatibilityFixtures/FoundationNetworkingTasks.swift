#if USE_FOUNDATION_NETWORKING
import FoundationNetworking
#else
import Courier
#endif
import Foundation

// A program written against FoundationNetworking's sessions and tasks, the way people write one: it
// must type-check unchanged against Courier. `scripts/check-source-compatibility` compiles it both
// ways with `swiftc -typecheck`; it is never run. It uses only what FoundationNetworking declares
// (no `bytes(for:)`), and avoids FoundationNetworking's deprecated API so that both builds are quiet.
// Its siblings, each a program of its own: FoundationNetworkingDelegates.swift (a delegate with
// every method, URLProtocol subclasses), FoundationNetworkingStorage.swift (cookies, credentials,
// the URL cache), FoundationNetworkingStreams.swift and FoundationNetworkingWebSocketClient.swift.

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

func asyncSurface(client: APIClient, delegate: CompletionOnlyDelegate) async {
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

// MARK: - A delegate that relies on the default methods

/// A delegate that only cares about completion and relies on the protocols' default methods.
final class CompletionOnlyDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        print(task.state == .completed, error as Any)
    }
}

// MARK: - Sessions and configurations

func makeSessions(delegate: CompletionOnlyDelegate) -> [URLSession] {
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
    print(configuration.sharedContainerIdentifier as Any)

    let ephemeral = URLSessionConfiguration.ephemeral
    let copy = ephemeral.copy() as! URLSessionConfiguration
    _ = ephemeral.copy(with: nil)

    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 1
    let delegating = URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
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

// MARK: - Entry point

@main
struct TasksProgram {
    static func main() async {
        let delegate = CompletionOnlyDelegate()
        let sessions = makeSessions(delegate: delegate)
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
        await asyncSurface(client: client, delegate: delegate)

        let task = sessions[1].dataTask(with: client.baseURL)
        inspect(task: task)
        inspect(task: ImmediateDataTask { print("resumed") })
        requestsAndResponses()
        print(RecordingSession().configuration.timeoutIntervalForResource)
        manage(sessions: sessions)
    }
}
