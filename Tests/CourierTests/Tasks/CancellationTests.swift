import Foundation
import Testing
@testable import Courier

@Suite("Cancellation")
struct CancellationTests {

    private func expectCancelled(_ error: (any Error)?, url: URL, sourceLocation: SourceLocation = #_sourceLocation) {
        let urlError = error as? URLError
        #expect(urlError?.code == .cancelled, sourceLocation: sourceLocation)
        #expect(urlError?.failingURL == url, sourceLocation: sourceLocation)
    }

    @Test("never resumed: completes once with cancelled, state .completed")
    func neverResumed() async throws {
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let url = URL(string: "data:,never")!
        let shot = OneShot<DataResult>()
        let task = session.dataTask(with: url) { data, response, error in
            shot.fulfil(DataResult(data: data, response: response, error: error))
        }
        #expect(task.state == .suspended)
        task.cancel()
        let result = try await shot.wait()
        expectCancelled(result.error, url: url)
        #expect(result.data == nil)
        #expect(await waitUntil { task.state == .completed })
        expectCancelled(task.error, url: url)
        task.resume()   // resuming a cancelled task does nothing
        await settle(0.2)
        #expect(shot.callCount == 1)
        #expect(task.state == .completed)
    }

    @Test("never resumed, with a delegate: one didCompleteWithError(cancelled) and nothing else")
    func neverResumedDelegate() async throws {
        let delegate = EventDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let url = URL(string: "data:,never")!
        let task = session.dataTask(with: url)
        task.cancel()
        #expect(await delegate.waitForCompletion(of: task))
        expectCancelled(delegate.error(of: task), url: url)
        #expect(!delegate.collapsedNames(for: task).contains("response"))
        #expect(delegate.collapsedNames(for: task).last == "complete")
        await settle(0.2)
        #expect(delegate.completionCount(of: task) == 1)
    }

    @Test("running: a 50 MB file: load cancelled from didReceive data stops with cancelled")
    func runningLargeFile() async throws {
        let content = TestFiles.bytes(count: 50 * 1024 * 1024, seed: 41)
        let file = try TestFiles.make(content)
        defer { TestFiles.remove(file) }
        var hooks = EventDelegate.Hooks()
        hooks.data = { task, _ in task.cancel() }
        let delegate = EventDelegate(hooks)
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: file)
        task.resume()

        #expect(await delegate.waitForCompletion(of: task))
        expectCancelled(delegate.error(of: task), url: file)
        expectCancelled(task.error, url: file)
        #expect(delegate.body(of: task).count < content.count)
        #expect(delegate.collapsedNames(for: task).last == "complete")
        #expect(task.state == .completed)
        await settle(0.3)
        #expect(delegate.completionCount(of: task) == 1)
        #expect(delegate.eventsAfterCompletion.isEmpty)
    }

    @Test("running: the custom protocol's stopLoading is called and the task ends with cancelled")
    func runningCustomProtocol() async throws {
        let delegate = EventDelegate()
        let session = ControlledURLProtocol.session(delegate: delegate)
        defer { session.invalidateAndCancel() }
        let url = ControlledURLProtocol.makeURL()
        let task = session.dataTask(with: url)
        task.resume()
        let server = try await ControlledURLProtocol.waitForStart(of: url)
        #expect(task.state == .running)
        server.respond()
        server.send(Data("partial".utf8))
        #expect(await delegate.waitForEvent { $0.name == "data" })
        // cancel() marks the task canceling at once; it is completed when its completion is
        // delivered on the delegate queue, held here so that the state in between can be seen.
        let hold = try await QueueHold(session.delegateQueue)
        task.cancel()
        #expect(task.state == .canceling)
        hold.release()
        #expect(await delegate.waitForCompletion(of: task))
        #expect(task.state == .completed)
        expectCancelled(delegate.error(of: task), url: url)
        #expect(await waitUntil { ControlledURLProtocol.stopCount(url) == 1 })
        // Reports after the cancel are ignored.
        server.send(Data("late".utf8))
        server.finish()
        await settle(0.2)
        #expect(delegate.body(of: task) == Data("partial".utf8))
        #expect(delegate.completionCount(of: task) == 1)
        #expect(delegate.eventsAfterCompletion.isEmpty)
    }

    @Test("suspended: cancelling a suspended task still completes it with cancelled")
    func suspended() async throws {
        let delegate = EventDelegate()
        let session = ControlledURLProtocol.session(delegate: delegate)
        defer { session.invalidateAndCancel() }
        let url = ControlledURLProtocol.makeURL()
        let task = session.dataTask(with: url)
        task.resume()
        _ = try await ControlledURLProtocol.waitForStart(of: url)
        task.suspend()
        #expect(task.state == .suspended)
        task.cancel()
        #expect(await delegate.waitForCompletion(of: task))
        expectCancelled(delegate.error(of: task), url: url)
        #expect(task.state == .completed)
        await settle(0.2)
        #expect(delegate.completionCount(of: task) == 1)
    }

    @Test("after completion: cancel is a no-op — no second completion, no error")
    func afterCompletion() async throws {
        let delegate = EventDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: URL(string: "data:,done")!)
        task.resume()
        #expect(await delegate.waitForCompletion(of: task))
        task.cancel()
        task.cancel()
        await settle(0.3)
        #expect(delegate.completionCount(of: task) == 1)
        #expect(delegate.error(of: task) == nil)
        #expect(task.error == nil)
        #expect(task.state == .completed)
        #expect(delegate.eventsAfterCompletion.isEmpty)
    }

    @Test("cancel() while the task is still .running but its protocol already finished ends with cancelled")
    func cancelAfterProtocolFinished() async throws {
        let pending = Locked<(@Sendable (URLSession.ResponseDisposition) -> Void)?>(nil)
        var hooks = EventDelegate.Hooks()
        hooks.response = { _, _, completion in pending.withLock { $0 = completion } }
        let delegate = EventDelegate(hooks)
        let session = ControlledURLProtocol.session(delegate: delegate)
        defer { session.invalidateAndCancel() }
        let url = ControlledURLProtocol.makeURL()
        let task = session.dataTask(with: url)
        task.resume()
        let server = try await ControlledURLProtocol.waitForStart(of: url)
        server.complete(with: Data("body".utf8))
        #expect(await waitUntil { pending.current != nil })

        #expect(task.state == .running)
        // cancel() marks the running task as canceling at once; the delegate queue is held so that
        // the completion (which makes it .completed) cannot have been delivered yet.
        let hold = try await QueueHold(session.delegateQueue)
        task.cancel()
        #expect(task.state == .canceling, "cancel() leaves .running at once")
        hold.release()
        pending.current?(.allow)
        #expect(await delegate.waitForCompletion(of: task))
        #expect(task.state == .completed)
        expectCancelled(delegate.error(of: task), url: url)
        expectCancelled(task.error, url: url)
    }

    @Test("cancelling twice, or from several threads at once, completes exactly once")
    func cancelRace() async throws {
        let session = ControlledURLProtocol.session()
        defer { session.invalidateAndCancel() }
        let url = ControlledURLProtocol.makeURL()
        let shot = OneShot<DataResult>()
        let task = session.dataTask(with: url) { data, response, error in
            shot.fulfil(DataResult(data: data, response: response, error: error))
        }
        task.resume()
        _ = try await ControlledURLProtocol.waitForStart(of: url)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in task.cancel() }
        let result = try await shot.wait()
        expectCancelled(result.error, url: url)
        await settle(0.3)
        #expect(shot.callCount == 1)
    }

    @Test("a cancelled download calls didCompleteWithError(cancelled) and never didFinishDownloadingTo")
    func download() async throws {
        let delegate = EventDelegate()
        let session = ControlledURLProtocol.session(delegate: delegate)
        defer { session.invalidateAndCancel() }
        let url = ControlledURLProtocol.makeURL()
        let task = session.downloadTask(with: url)
        task.resume()
        let server = try await ControlledURLProtocol.waitForStart(of: url)
        server.respond(headers: ["Content-Length": "100"])
        server.send(Data(repeating: 1, count: 10))
        #expect(await delegate.waitForEvent { $0.name == "wrote" })
        task.cancel()
        #expect(await delegate.waitForCompletion(of: task))
        expectCancelled(delegate.error(of: task), url: url)
        #expect(!delegate.collapsedNames(for: task).contains("finishedDownload"))
    }
}
