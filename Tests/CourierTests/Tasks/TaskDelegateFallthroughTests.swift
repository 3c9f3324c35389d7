import Foundation
import Testing
@testable import Courier

/// A task delegate that adopts the data protocol but implements only `didCompleteWithError`: every
/// other message must reach the session's delegate, as on Apple's platforms.
private final class CompletionOnlyDataDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    let completions = Locked<[Int: Int]>([:])

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        completions.withLock { $0[task.taskIdentifier, default: 0] += 1 }
    }

    /// Waits (bounded) until `task` completed at least once.
    func waitForCompletion(of task: URLSessionTask) async -> Bool {
        let id = task.taskIdentifier
        return await waitUntil { self.completions.current[id] != nil }
    }

    /// Makes this the delegate of `task`, resumes it and waits (bounded) for its completion.
    func run(_ task: URLSessionTask) async -> Bool {
        task.delegate = self
        task.resume()
        return await waitForCompletion(of: task)
    }
}

/// A download task delegate that implements only what the protocol requires (the file) and the
/// completion: progress must reach the session's delegate.
private final class FileOnlyDownloadDelegate: NSObject, URLSessionDownloadDelegate, @unchecked Sendable {
    let files = Locked<[Int: Data]>([:])
    let completions = Locked<[Int: Int]>([:])

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        let content = (try? Data(contentsOf: location)) ?? Data()
        files.withLock { $0[downloadTask.taskIdentifier] = content }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        completions.withLock { $0[task.taskIdentifier, default: 0] += 1 }
    }
}

/// A task delegate that implements nothing at all.
private final class SilentTaskDelegate: NSObject, URLSessionTaskDelegate, @unchecked Sendable {}

@Suite("Task delegate falls through to the session's delegate")
struct TaskDelegateFallthroughTests {

    private static func session(delegate: EventDelegate) -> URLSession {
        URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
    }

    @Test("unimplemented data messages (response, data, metrics) reach the session's delegate once; completion stays with the task's")
    func dataMessagesFallThrough() async throws {
        let sessionDelegate = EventDelegate()
        let session = Self.session(delegate: sessionDelegate)
        defer { session.invalidateAndCancel() }
        let taskDelegate = CompletionOnlyDataDelegate()
        let task = session.dataTask(with: URL(string: "data:,through")!)

        #expect(await taskDelegate.run(task))
        await settle(0.1)
        #expect(sessionDelegate.collapsedNames(for: task) == ["response", "data", "metrics"])
        #expect(sessionDelegate.events(for: task).filter { $0.name == "response" }.count == 1)
        #expect(sessionDelegate.events(for: task).filter { $0.name == "metrics" }.count == 1)
        #expect(sessionDelegate.body(of: task) == Data("through".utf8))
        #expect(sessionDelegate.completionCount(of: task) == 0)
        #expect(taskDelegate.completions.current[task.taskIdentifier] == 1)
        #expect(sessionDelegate.queuesSeen == [ObjectIdentifier(session.delegateQueue)])
    }

    @Test("the session delegate's response disposition is the one applied, exactly once")
    func responseDispositionFallsThrough() async throws {
        let asked = Locked(0)
        var hooks = EventDelegate.Hooks()
        hooks.response = { _, _, completionHandler in
            asked.withLock { $0 += 1 }
            completionHandler(.cancel)
        }
        let sessionDelegate = EventDelegate(hooks)
        let session = Self.session(delegate: sessionDelegate)
        defer { session.invalidateAndCancel() }
        let taskDelegate = CompletionOnlyDataDelegate()
        let task = session.dataTask(with: URL(string: "data:,never%20delivered")!)

        #expect(await taskDelegate.run(task))
        #expect(asked.current == 1)
        #expect((task.error as? URLError)?.code == .cancelled)
        #expect(sessionDelegate.body(of: task).isEmpty)
    }

    @Test("an unimplemented redirect decision is asked of the session's delegate, which can refuse it")
    func redirectFallsThrough() async throws {
        let server = try Self.redirectingServer()
        defer { server.stop() }
        let sessionDelegate = Self.refusingRedirects()
        let session = Self.session(delegate: sessionDelegate)
        defer { session.invalidateAndCancel() }
        let taskDelegate = CompletionOnlyDataDelegate()
        let task = session.dataTask(with: server.url("/moved"))

        #expect(await taskDelegate.run(task))
        #expect(sessionDelegate.redirectResponses(of: task).count == 1)
        #expect((task.response as? HTTPURLResponse)?.statusCode == 302)
        #expect(server.requests(for: "/final").isEmpty)
    }

    @Test("an unimplemented challenge is answered by the session's delegate")
    func challengeFallsThrough() async throws {
        let server = try FaultServer(routes: [
            "/private": .basicAuth(realm: "fallthrough", user: "alice", password: "secret", body: Data("inside".utf8)),
        ])
        defer { server.stop() }
        var hooks = EventDelegate.Hooks()
        hooks.challenge = { _, _, completionHandler in
            completionHandler(.useCredential, URLCredential(user: "alice", password: "secret", persistence: .forSession))
        }
        let sessionDelegate = EventDelegate(hooks)
        let session = Self.session(delegate: sessionDelegate)
        defer { session.invalidateAndCancel() }
        let taskDelegate = CompletionOnlyDataDelegate()
        let task = session.dataTask(with: server.url("/private"))

        #expect(await taskDelegate.run(task))
        #expect(sessionDelegate.events(for: task).filter { $0.name == "challenge" }.count == 1)
        #expect((task.response as? HTTPURLResponse)?.statusCode == 200)
        #expect(sessionDelegate.body(of: task) == Data("inside".utf8))
    }

    @Test("upload progress the task's delegate does not handle reaches the session's delegate")
    func sentBodyDataFallsThrough() async throws {
        let server = try FaultServer(routes: ["/sink": .sink])
        defer { server.stop() }
        let sessionDelegate = EventDelegate()
        let session = Self.session(delegate: sessionDelegate)
        defer { session.invalidateAndCancel() }
        let taskDelegate = CompletionOnlyDataDelegate()
        var request = URLRequest(url: server.url("/sink"))
        request.httpMethod = "POST"
        let body = Data(repeating: 0x61, count: 64 * 1024)
        let task = session.uploadTask(with: request, from: body)

        #expect(await taskDelegate.run(task))
        let sent = sessionDelegate.events(for: task).compactMap { event -> Int64? in
            if case .sentBody(_, let total, _) = event { return total }
            return nil
        }
        #expect(sent.last == Int64(body.count))
    }

    @Test("willCacheResponse the task's delegate does not handle is asked of the session's delegate, whose answer counts")
    func willCacheResponseFallsThrough() async throws {
        let server = try FaultServer(routes: [
            "/cacheable": .respond(.ok(Data("cache me".utf8), headers: [("Cache-Control", "max-age=60")])),
        ])
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        let sessionDelegate = CacheTestDelegate { _ in nil }
        let session = CacheTest.session(cache: store.cache, delegate: sessionDelegate)
        defer { session.invalidateAndCancel() }
        let taskDelegate = CompletionOnlyDataDelegate()
        let url = server.url("/cacheable")
        let task = session.dataTask(with: url)

        #expect(await taskDelegate.run(task))
        #expect(sessionDelegate.events(of: task) == ["response", "data", "willCache", "metrics"])
        #expect(store.cache.cachedResponse(for: URLRequest(url: url)) == nil)
    }

    @Test("a download delegate that implements only the file leaves progress to the session's delegate")
    func downloadProgressFallsThrough() async throws {
        let content = TestFiles.bytes(count: 256 * 1024, seed: 11)
        let file = try TestFiles.make(content)
        defer { TestFiles.remove(file) }
        let sessionDelegate = EventDelegate()
        let session = Self.session(delegate: sessionDelegate)
        defer { session.invalidateAndCancel() }
        let taskDelegate = FileOnlyDownloadDelegate()
        let task = session.downloadTask(with: file)
        task.delegate = taskDelegate
        task.resume()

        let id = task.taskIdentifier
        #expect(await waitUntil { taskDelegate.completions.current[id] != nil })
        #expect(taskDelegate.files.current[id] == content)
        let written = sessionDelegate.events(for: task).compactMap { event -> Int64? in
            if case .wrote(_, _, let total, _) = event { return total }
            return nil
        }
        #expect(written.last == Int64(content.count))
        #expect(sessionDelegate.download(of: task) == nil)
    }

    @Test("a task delegate implementing nothing leaves the completion (and everything else) to the session's delegate")
    func completionFallsThrough() async throws {
        let sessionDelegate = EventDelegate()
        let session = Self.session(delegate: sessionDelegate)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: URL(string: "data:,silent")!)
        task.delegate = SilentTaskDelegate()
        task.resume()

        #expect(await sessionDelegate.waitForCompletion(of: task))
        #expect(sessionDelegate.collapsedNames(for: task) == ["response", "data", "metrics", "complete"])
        await settle(0.1)
        #expect(sessionDelegate.completionCount(of: task) == 1)
    }

    @Test("the same object as task and session delegate hears each message once")
    func sameObjectHearsOnce() async throws {
        let delegate = CompletionOnlyDataDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: URL(string: "data:,once")!)
        task.delegate = delegate
        task.resume()

        #expect(await delegate.waitForCompletion(of: task))
        await settle(0.1)
        #expect(delegate.completions.current[task.taskIdentifier] == 1)
    }

    /// A server whose `/moved` redirects to `/final`.
    private static func redirectingServer() throws -> FaultServer {
        try FaultServer(routes: [
            "/moved": .respond(.ok(Data("moved".utf8), status: 302, reason: "Found", headers: [("Location", "/final")])),
            "/final": .respond(.ok(Data("final".utf8))),
        ])
    }

    /// A session delegate that refuses every redirect.
    private static func refusingRedirects() -> EventDelegate {
        var hooks = EventDelegate.Hooks()
        hooks.redirect = { _, _, _, completionHandler in completionHandler(nil) }
        return EventDelegate(hooks)
    }

    @Test("data(for:delegate:) with a delegate that does not decide redirects lets the session's delegate decide")
    func asyncDelegateFallsThrough() async throws {
        let server = try Self.redirectingServer()
        defer { server.stop() }
        let sessionDelegate = Self.refusingRedirects()
        let session = Self.session(delegate: sessionDelegate)
        defer { session.invalidateAndCancel() }

        let (_, response) = try await session.data(for: URLRequest(url: server.url("/moved")), delegate: SilentTaskDelegate())
        #expect((response as? HTTPURLResponse)?.statusCode == 302)
    }

    @Test("bytes(for:) without a delegate lets the session's delegate decide redirects")
    func bytesWithoutDelegateFallsThrough() async throws {
        let server = try Self.redirectingServer()
        defer { server.stop() }
        let sessionDelegate = Self.refusingRedirects()
        let session = Self.session(delegate: sessionDelegate)
        defer { session.invalidateAndCancel() }

        let (bytes, response) = try await session.bytes(for: URLRequest(url: server.url("/moved")))
        bytes.task.cancel()
        #expect((response as? HTTPURLResponse)?.statusCode == 302)
    }
}
