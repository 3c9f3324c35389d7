import Foundation
import Testing
@testable import Courier

/// `waitsForConnectivity`: a task that cannot reach its server tells the delegate once
/// (`urlSession(_:taskIsWaitingForConnectivity:)`) and keeps trying until the server appears or
/// `timeoutIntervalForResource` runs out; `timeoutIntervalForRequest` does not apply while waiting.
/// Without it, an unreachable server fails the task at once.
@Suite("HTTP waits for connectivity")
struct HTTPWaitsForConnectivityTests {

    /// Records what the tests need, including `taskIsWaitingForConnectivity` (which ``EventDelegate``
    /// does not implement).
    final class ConnectivityDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        private struct State {
            var waiting: [Int: [Date]] = [:]
            var bodies: [Int: Data] = [:]
            var responses: [Int: URLResponse] = [:]
            var completed: [Int: (any Error)?] = [:]
            var completedAt: [Int: Date] = [:]
        }
        private let state = Locked(State())

        func waitingCalls(for task: URLSessionTask) -> [Date] { state.current.waiting[task.taskIdentifier] ?? [] }
        func body(of task: URLSessionTask) -> Data { state.current.bodies[task.taskIdentifier] ?? Data() }
        func response(of task: URLSessionTask) -> URLResponse? { state.current.responses[task.taskIdentifier] }
        func error(of task: URLSessionTask) -> (any Error)? { state.current.completed[task.taskIdentifier] ?? nil }
        func completedAt(_ task: URLSessionTask) -> Date? { state.current.completedAt[task.taskIdentifier] }
        func isComplete(_ task: URLSessionTask) -> Bool { state.current.completed.keys.contains(task.taskIdentifier) }

        func waitForCompletion(of task: URLSessionTask, timeout: TimeInterval) async -> Bool {
            await waitUntil(timeout: timeout) { self.isComplete(task) }
        }

        func waitForWaiting(of task: URLSessionTask, timeout: TimeInterval) async -> Bool {
            await waitUntil(timeout: timeout) { !self.waitingCalls(for: task).isEmpty }
        }

        func urlSession(_ session: URLSession, taskIsWaitingForConnectivity task: URLSessionTask) {
            state.withLock { $0.waiting[task.taskIdentifier, default: []].append(Date()) }
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
            state.withLock { $0.responses[dataTask.taskIdentifier] = response }
            completionHandler(.allow)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            state.withLock { $0.bodies[dataTask.taskIdentifier, default: Data()].append(data) }
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            state.withLock {
                $0.completed[task.taskIdentifier] = error
                $0.completedAt[task.taskIdentifier] = Date()
            }
        }
    }

    private func session(_ delegate: ConnectivityDelegate, waits: Bool = true,
                         configure: (URLSessionConfiguration) -> Void = { _ in }) -> URLSession {
        HTTPTest.session(delegate: delegate) {
            $0.waitsForConnectivity = waits
            configure($0)
        }
    }

    @Test func waitsAndLoadsOnceTheServerListens() async throws {
        let server = try await HTTPTest.nginx()
        let port = try HTTPTest.refusedPort()
        let delegate = ConnectivityDelegate()
        let session = session(delegate) { $0.timeoutIntervalForResource = 60 }
        defer { session.finishTasksAndInvalidate() }
        let url = URL(string: "http://127.0.0.1:\(port)\(NginxServer.Files.hello)")!
        let task = session.dataTask(with: url)
        task.resume()
        #expect(await delegate.waitForWaiting(of: task, timeout: 5), "the delegate is told the task waits")
        // A few retries later: still told only once, still running.
        await settle(1)
        #expect(delegate.waitingCalls(for: task).count == 1)
        #expect(!delegate.isComplete(task))
        #expect(task.state == .running)

        // The server appears on that port (a relay to nginx).
        let relay = try ForwardProxy(.relay(port: server.httpPort), port: port)
        defer { relay.stop() }
        #expect(await delegate.waitForCompletion(of: task, timeout: 15))
        #expect(delegate.error(of: task) == nil, "\(String(describing: delegate.error(of: task)))")
        #expect((delegate.response(of: task) as? HTTPURLResponse)?.statusCode == 200)
        #expect(delegate.body(of: task) == NginxServer.Files.helloContents)
        #expect(delegate.waitingCalls(for: task).count == 1)
        #expect(relay.connections >= 1)
    }

    @Test func requestTimeoutDoesNotApplyWhileWaiting() async throws {
        let server = try await HTTPTest.nginx()
        let port = try HTTPTest.refusedPort()
        let delegate = ConnectivityDelegate()
        let session = session(delegate) {
            $0.timeoutIntervalForRequest = 1
            $0.timeoutIntervalForResource = 60
        }
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: URL(string: "http://127.0.0.1:\(port)\(NginxServer.Files.hello)")!)
        task.resume()
        #expect(await delegate.waitForWaiting(of: task, timeout: 5))
        await settle(2.5)
        #expect(!delegate.isComplete(task), "failed after the request timeout: \(String(describing: delegate.error(of: task)))")
        let relay = try ForwardProxy(.relay(port: server.httpPort), port: port)
        defer { relay.stop() }
        #expect(await delegate.waitForCompletion(of: task, timeout: 15))
        #expect(delegate.error(of: task) == nil, "\(String(describing: delegate.error(of: task)))")
        #expect(delegate.body(of: task) == NginxServer.Files.helloContents)
    }

    @Test func resourceTimeoutEndsTheWait() async throws {
        let port = try HTTPTest.refusedPort()
        let delegate = ConnectivityDelegate()
        let session = session(delegate) { $0.timeoutIntervalForResource = 2 }
        defer { session.finishTasksAndInvalidate() }
        let url = URL(string: "http://127.0.0.1:\(port)/never")!
        let task = session.dataTask(with: url)
        let started = Date()
        task.resume()
        #expect(await delegate.waitForCompletion(of: task, timeout: 10))
        let elapsed = (delegate.completedAt(task) ?? Date()).timeIntervalSince(started)
        let error = try HTTPTest.urlError(delegate.error(of: task))
        #expect(error.code == .timedOut, "got \(error.code): \(error.localizedDescription)")
        #expect(HTTPTest.hasFailingURL(error, url))
        #expect(elapsed >= 1.5 && elapsed < 6, "ended after \(elapsed) s")
        #expect(delegate.waitingCalls(for: task).count == 1)
    }

    @Test func unresolvableHostWaitsToo() async throws {
        let delegate = ConnectivityDelegate()
        let session = session(delegate) { $0.timeoutIntervalForResource = 2 }
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: URL(string: "http://\(HTTPTest.unresolvableHost)/")!)
        task.resume()
        #expect(await delegate.waitForCompletion(of: task, timeout: 10))
        #expect((delegate.error(of: task) as? URLError)?.code == .timedOut)
        #expect(delegate.waitingCalls(for: task).count == 1)
    }

    @Test func cancellingAWaitingTaskStopsTheRetries() async throws {
        let server = try await HTTPTest.nginx()
        let port = try HTTPTest.refusedPort()
        let delegate = ConnectivityDelegate()
        let session = session(delegate) { $0.timeoutIntervalForResource = 60 }
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: URL(string: "http://127.0.0.1:\(port)/")!)
        task.resume()
        #expect(await delegate.waitForWaiting(of: task, timeout: 5))
        task.cancel()
        #expect(await delegate.waitForCompletion(of: task, timeout: 5))
        #expect((delegate.error(of: task) as? URLError)?.code == .cancelled)
        // A server appearing later is not contacted by the cancelled task.
        let relay = try ForwardProxy(.relay(port: server.httpPort), port: port)
        defer { relay.stop() }
        await settle(2.5)
        #expect(relay.connections == 0)
    }

    @Test func withoutWaitingAnUnreachableServerFailsAtOnce() async throws {
        let port = try HTTPTest.refusedPort()
        let delegate = ConnectivityDelegate()
        let session = session(delegate, waits: false) { $0.timeoutIntervalForResource = 30 }
        defer { session.finishTasksAndInvalidate() }
        let url = URL(string: "http://127.0.0.1:\(port)/")!
        let task = session.dataTask(with: url)
        let started = Date()
        task.resume()
        #expect(await delegate.waitForCompletion(of: task, timeout: 10))
        let error = try HTTPTest.urlError(delegate.error(of: task))
        #expect(error.code == .cannotConnectToHost, "got \(error.code)")
        #expect(HTTPTest.hasFailingURL(error, url))
        #expect((delegate.completedAt(task) ?? Date()).timeIntervalSince(started) < 3)
        #expect(delegate.waitingCalls(for: task).isEmpty)
    }

    @Test func waitingDoesNotDelayAReachableServer() async throws {
        let server = try await HTTPTest.nginx()
        let delegate = ConnectivityDelegate()
        let session = session(delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url(NginxServer.Files.hello))
        task.resume()
        #expect(await delegate.waitForCompletion(of: task, timeout: 10))
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == NginxServer.Files.helloContents)
        #expect(delegate.waitingCalls(for: task).isEmpty)
    }
}
