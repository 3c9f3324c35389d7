import Foundation
import Testing
@testable import Courier

/// Helpers for the HTTP cache tests: every test gets its own `URLCache` in a fresh temporary
/// directory and an ephemeral session using it, so nothing touches the user's cache directory or
/// `URLCache.shared`.
enum CacheTest {
    /// A cache with its own temporary disk directory; call ``CacheTestStore/remove()`` when done.
    static func store(memory: Int = 1 << 20, disk: Int = 8 << 20) -> CacheTestStore {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-http-cache-tests-\(UUID().uuidString)", isDirectory: true)
        return CacheTestStore(cache: URLCache(memoryCapacity: memory, diskCapacity: disk, diskPath: directory.path),
                              directory: directory)
    }

    /// An ephemeral session using `cache`, with the default cache policy unless `configure` changes it.
    static func session(cache: URLCache?, delegate: (any URLSessionDelegate)? = nil,
                        configure: (URLSessionConfiguration) -> Void = { _ in }) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = cache
        configuration.requestCachePolicy = .useProtocolCachePolicy
        configure(configuration)
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    /// A GET request for `url` with a cache policy and extra headers.
    static func request(_ url: URL, policy: URLRequest.CachePolicy = .useProtocolCachePolicy,
                        headers: [String: String] = [:]) -> URLRequest {
        var request = URLRequest(url: url, cachePolicy: policy)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    /// The body of a completion as text ("" when there is none).
    static func text(_ result: DataResult) -> String {
        result.data.flatMap { String(data: $0, encoding: .utf8) } ?? ""
    }

    /// The regular files in `directory` (none when it does not exist).
    static func files(in directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { !$0.hasPrefix(".") }
    }
}

/// A `URLCache` and the temporary directory holding its disk store.
struct CacheTestStore: Sendable {
    let cache: URLCache
    let directory: URL

    /// Deletes the disk directory.
    func remove() { try? FileManager.default.removeItem(at: directory) }
}

/// A data delegate that records the order of the messages each task gets and lets a test answer
/// `willCacheResponse`.
final class CacheTestDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    /// What `willCacheResponse` answers; by default the proposed response.
    typealias WillCache = @Sendable (CachedURLResponse) -> CachedURLResponse?

    private struct State {
        var events: [Int: [String]] = [:]
        var bodies: [Int: Data] = [:]
        var errors: [Int: any Error] = [:]
        var proposed: [Int: CachedURLResponse] = [:]
        var metrics: [Int: URLSessionTaskMetrics] = [:]
        var completed: Set<Int> = []
    }

    private let willCache: WillCache?
    private let state = Locked(State())

    init(willCache: WillCache? = nil) {
        self.willCache = willCache
        super.init()
    }

    /// The message names `task` received, in order.
    func events(of task: URLSessionTask) -> [String] {
        let all = state.current.events[task.taskIdentifier] ?? []
        // Collapse runs of data chunks, whose count depends on how the body arrived.
        return all.enumerated().compactMap { index, name in
            index > 0 && name == "data" && all[index - 1] == "data" ? nil : name
        }
    }

    /// The body `task` received.
    func body(of task: URLSessionTask) -> String {
        String(data: state.current.bodies[task.taskIdentifier] ?? Data(), encoding: .utf8) ?? ""
    }

    /// The error `task` completed with.
    func error(of task: URLSessionTask) -> (any Error)? { state.current.errors[task.taskIdentifier] }

    /// The response `willCacheResponse` was offered for `task`.
    func proposed(for task: URLSessionTask) -> CachedURLResponse? { state.current.proposed[task.taskIdentifier] }

    /// The metrics of `task`.
    func metrics(of task: URLSessionTask) -> URLSessionTaskMetrics? { state.current.metrics[task.taskIdentifier] }

    /// Resumes `task` and waits (bounded) for its completion.
    func run(_ task: URLSessionTask) async throws {
        task.resume()
        let id = task.taskIdentifier
        guard await waitUntil({ self.state.current.completed.contains(id) }) else {
            throw TestTimeout(what: "task \(id) to complete")
        }
    }

    private func record(_ task: URLSessionTask, _ name: String, _ update: (inout State) -> Void = { _ in }) {
        state.withLock {
            $0.events[task.taskIdentifier, default: []].append(name)
            update(&$0)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        record(dataTask, "response")
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        record(dataTask, "data") { $0.bodies[dataTask.taskIdentifier, default: Data()].append(data) }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse,
                    completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void) {
        record(dataTask, "willCache") { $0.proposed[dataTask.taskIdentifier] = proposedResponse }
        completionHandler(willCache.map { $0(proposedResponse) } ?? proposedResponse)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics) {
        record(task, "metrics") { $0.metrics[task.taskIdentifier] = metrics }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        record(task, "complete") {
            if let error { $0.errors[task.taskIdentifier] = error }
            $0.completed.insert(task.taskIdentifier)
        }
    }
}
