import Foundation
import FoundationNetworking
import Synchronization

/// The test gave up waiting.
struct TimedOut: Error {}

/// Runs `body`, failing with ``TimedOut`` after `seconds`.
func bounded<T: Sendable>(_ seconds: Double = 30, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            throw TimedOut()
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw TimedOut() }
        return first
    }
}

/// The outcome of a FoundationNetworking task run with a completion handler.
struct CompletionOutcome: Sendable {
    var data: Data?
    var response: URLResponse?
    var error: URLError?
}

/// Runs a FoundationNetworking data task with a completion handler and returns what it got.
/// `whileRunning` gets the resumed task (to suspend or cancel it).
func runDataTask(_ request: URLRequest, on session: URLSession = .shared,
                 whileRunning: @escaping @Sendable (URLSessionDataTask) async -> Void = { _ in }) async throws -> CompletionOutcome {
    try await bounded {
        let once = OnceFlag()
        return await withCheckedContinuation { continuation in
            let task = session.dataTask(with: request) { data, response, error in
                // FoundationNetworking may call a completion handler twice after a cancel.
                guard once.claim() else { return }
                continuation.resume(returning: CompletionOutcome(data: data, response: response, error: error as? URLError))
            }
            task.resume()
            Task { await whileRunning(task) }
        }
    }
}

/// True the first time ``claim()`` is called, false after.
final class OnceFlag: Sendable {
    private let claimed = Mutex(false)

    func claim() -> Bool {
        claimed.withLock { claimed -> Bool in
            defer { claimed = true }
            return !claimed
        }
    }
}

/// A FoundationNetworking data delegate that records each body chunk and the completion.
final class RecordingDataDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let state = Mutex<(chunks: [Data], error: (any Error)?, done: Bool)>(([], nil, false))
    /// What a host-key challenge is answered with: accept the fingerprint in the realm, or cancel.
    let acceptsHostKey: Bool?
    /// The realms of the challenges the delegate was asked about.
    let challengeRealms = Mutex<[String]>([])
    /// The URLs of the redirects the delegate was asked about (it lets each one happen).
    let redirects = Mutex<[URL]>([])

    init(acceptsHostKey: Bool? = nil) {
        self.acceptsHostKey = acceptsHostKey
    }

    var chunks: [Data] { state.withLock { $0.chunks } }
    var error: (any Error)? { state.withLock { $0.error } }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        state.withLock { $0.chunks.append(data) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        state.withLock {
            $0.error = error
            $0.done = true
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        if let url = request.url { redirects.withLock { $0.append(url) } }
        completionHandler(request)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        let realm = challenge.protectionSpace.realm ?? ""
        challengeRealms.withLock { $0.append(realm) }
        guard challenge.protectionSpace.authenticationMethod == "NSURLAuthenticationMethodSSHHostKey", let acceptsHostKey else {
            completionHandler(.performDefaultHandling, nil)
            return
        }
        guard acceptsHostKey else {
            completionHandler(.cancelAuthenticationChallenge, nil)
            return
        }
        // The realm is "<key type> SHA256:<fingerprint>"; the bridge reads the password as the fingerprint.
        let fingerprint = realm.split(separator: " ").last.map(String.init) ?? ""
        completionHandler(.useCredential, URLCredential(user: "", password: fingerprint, persistence: .forSession))
    }

    /// Waits (at most `seconds`) for the task to complete; returns whether it did.
    func waitForCompletion(seconds: Double = 30) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if state.withLock({ $0.done }) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return state.withLock { $0.done }
    }
}
