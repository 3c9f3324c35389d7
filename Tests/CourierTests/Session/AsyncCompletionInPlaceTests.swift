import Foundation
import Testing
@testable import Courier

/// The async calls' fast path (`URLSessionTask.scheduleDrain()`): with no delegate, `data(for:)`
/// resumes its caller from the thread that ends the task instead of through an operation of the
/// delegate queue; with a delegate that may receive the task's messages, nothing changes.
@Suite("async calls complete in place without a delegate")
struct AsyncCompletionInPlaceTests {
    /// A session with no URL cache: a cacheable response would queue the cache's store step ahead of
    /// the completion, and the completion then waits for it on the delegate queue.
    private static func uncachedSession(delegate: (any URLSessionDelegate)? = nil) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    @Test("data(from:) without a delegate returns while the delegate queue is suspended")
    func completesWithoutTheDelegateQueue() async throws {
        let server = try await NginxServer.shared()
        let session = Self.uncachedSession()
        session.delegateQueue.isSuspended = true
        defer {
            session.delegateQueue.isSuspended = false
            session.invalidateAndCancel()
        }
        let (body, _) = try await withTimeout(testWaitLimit, "data(from:) with the delegate queue suspended") {
            try await session.data(from: server.url(NginxServer.Files.hello))
        }
        #expect(body == NginxServer.Files.helloContents)
    }

    @Test("with a task delegate, its metrics arrive before data(for:delegate:) returns")
    func taskDelegateSeesMetricsFirst() async throws {
        let server = try await NginxServer.shared()
        let session = Self.uncachedSession()
        defer { session.invalidateAndCancel() }
        let delegate = MetricsRecorder()
        let url = server.url(NginxServer.Files.hello)
        _ = try await withTimeout { try await session.data(from: url, delegate: delegate) }
        // Read at once, without waiting: Apple's order puts the metrics before the completion.
        #expect(delegate.metrics.current.map { $0.transactionMetrics.last?.request.url } == [url])
    }

    @Test("with a session delegate that takes task messages, its metrics arrive before data(from:) returns")
    func sessionDelegateSeesMetricsFirst() async throws {
        let server = try await NginxServer.shared()
        let delegate = MetricsRecorder()
        let session = Self.uncachedSession(delegate: delegate)
        defer { session.invalidateAndCancel() }
        let url = server.url(NginxServer.Files.hello)
        _ = try await withTimeout { try await session.data(from: url) }
        #expect(delegate.metrics.current.map { $0.transactionMetrics.last?.request.url } == [url])
    }

    @Test("cancelling calls racing their in-place completion ends each one once, with the body or cancelled")
    func cancelRacingCompletion() async throws {
        let server = try await NginxServer.shared()
        let session = Self.uncachedSession()
        defer { session.invalidateAndCancel() }
        let url = server.url(NginxServer.Files.hello)
        let unexpected: [String] = try await withTimeout(testWaitLimit, "60 cancelled calls") {
            var unexpected: [String] = []
            for round in 0..<60 {
                let call = Task { try await session.data(from: url) }
                // From "before the request is sent" to "after the response arrived".
                if round % 3 != 0 { try? await Task.sleep(nanoseconds: UInt64(round % 7) * 150_000) }
                call.cancel()
                switch await call.result {
                case .success(let (body, _)):
                    if body != NginxServer.Files.helloContents { unexpected.append("round \(round): \(body.count) bytes") }
                case .failure(let error as URLError) where error.code == .cancelled:
                    break
                case .failure(let error):
                    unexpected.append("round \(round): \(error)")
                }
            }
            return unexpected
        }
        #expect(unexpected == [])
    }
}

/// A task delegate that keeps the metrics it receives, in order.
private final class MetricsRecorder: NSObject, URLSessionTaskDelegate, Sendable {
    let metrics = Locked<[URLSessionTaskMetrics]>([])

    func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics) {
        self.metrics.withLock { $0.append(metrics) }
    }
}
