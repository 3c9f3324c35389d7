import Foundation
import Testing
@testable import Courier

@Suite("Suspend and resume")
struct SuspendResumeTests {

    @Test("a suspended running task delivers nothing until resumed, then everything; states follow")
    func holdsDelivery() async throws {
        let delegate = EventDelegate()
        let session = ControlledURLProtocol.session(delegate: delegate)
        defer { session.invalidateAndCancel() }
        let url = ControlledURLProtocol.makeURL()
        let task = session.dataTask(with: url)
        var states: [URLSessionTask.State] = [task.state]
        task.resume()
        states.append(task.state)
        let server = try await ControlledURLProtocol.waitForStart(of: url)

        task.suspend()
        states.append(task.state)
        server.respond(headers: ["Content-Length": "6"])
        server.send(Data("abc".utf8))
        await settle(0.3)
        #expect(delegate.events(for: task).isEmpty, "got \(delegate.events(for: task)) while suspended")
        #expect(task.state == .suspended)

        task.resume()
        states.append(task.state)
        #expect(await delegate.waitForEvent { $0 == .data(task: task.taskIdentifier, count: 3) })
        server.send(Data("def".utf8))
        server.finish()
        #expect(await delegate.waitForCompletion(of: task))
        states.append(task.state)
        #expect(states == [.suspended, .running, .suspended, .running, .completed])
        #expect(delegate.collapsedNames(for: task) == ["response", "data", "metrics", "complete"])
        #expect(delegate.body(of: task) == Data("abcdef".utf8))
        #expect(delegate.error(of: task) == nil)
    }

    @Test("a task whose protocol finished while it was suspended completes when resumed")
    func finishedWhileSuspended() async throws {
        let delegate = EventDelegate()
        let session = ControlledURLProtocol.session(delegate: delegate)
        defer { session.invalidateAndCancel() }
        let url = ControlledURLProtocol.makeURL()
        let task = session.dataTask(with: url)
        task.resume()
        let server = try await ControlledURLProtocol.waitForStart(of: url)
        task.suspend()
        server.respond(headers: ["Content-Length": "6"])
        server.send(Data("abcdef".utf8))
        server.finish()
        await settle(0.3)
        #expect(delegate.events(for: task).isEmpty)

        task.resume()
        #expect(task.state == .running)
        #expect(await delegate.waitForCompletion(of: task))
        #expect(delegate.body(of: task) == Data("abcdef".utf8))
        #expect(delegate.error(of: task) == nil)
        #expect(task.state == .completed)
    }

    @Test("a 20 MB file: data task suspended from didReceive data pauses, then resumes to every byte")
    func fileDataTask() async throws {
        let content = TestFiles.bytes(count: 20 * 1024 * 1024, seed: 51)
        let file = try TestFiles.make(content)
        defer { TestFiles.remove(file) }
        // `claimed`: the first callback takes the suspension; `suspendedOnce`: it has suspended the
        // task (set only after `suspend()` returned, so the test never looks too early).
        let claimed = Locked(false)
        let suspendedOnce = Locked(false)
        var hooks = EventDelegate.Hooks()
        hooks.data = { task, _ in
            let first = claimed.withLock { done -> Bool in
                defer { done = true }
                return !done
            }
            if first {
                task.suspend()
                suspendedOnce.withLock { $0 = true }
            }
        }
        let delegate = EventDelegate(hooks)
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: file)
        task.resume()

        #expect(await waitUntil { suspendedOnce.current })
        #expect(task.state == .suspended)
        await settle(0.1)
        let countWhenSuspended = delegate.events(for: task).count
        await settle(0.4)
        #expect(delegate.events(for: task).count == countWhenSuspended, "no callbacks while suspended")
        #expect(task.state == .suspended)
        #expect(!delegate.collapsedNames(for: task).contains("complete"))

        task.resume()
        #expect(await delegate.waitForCompletion(of: task))
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == content)
    }

    @Test("a 20 MB file download suspended from didWriteData pauses, then resumes to a complete file")
    func fileDownload() async throws {
        let content = TestFiles.bytes(count: 20 * 1024 * 1024, seed: 52)
        let file = try TestFiles.make(content)
        defer { TestFiles.remove(file) }
        // `claimed`: the first callback takes the suspension; `suspendedOnce`: it has suspended the
        // task (set only after `suspend()` returned, so the test never looks too early).
        let claimed = Locked(false)
        let suspendedOnce = Locked(false)
        var hooks = EventDelegate.Hooks()
        hooks.wrote = { task, _, _, _ in
            let first = claimed.withLock { done -> Bool in
                defer { done = true }
                return !done
            }
            if first {
                task.suspend()
                suspendedOnce.withLock { $0 = true }
            }
        }
        let delegate = EventDelegate(hooks)
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.downloadTask(with: file)
        task.resume()

        #expect(await waitUntil { suspendedOnce.current })
        let countWhenSuspended = delegate.events(for: task).count
        await settle(0.4)
        #expect(delegate.events(for: task).count == countWhenSuspended, "no callbacks while suspended")
        #expect(task.state == .suspended)

        task.resume()
        #expect(await delegate.waitForCompletion(of: task))
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.download(of: task)?.content == content)
    }

    @Test("suspending a task that was never resumed keeps it suspended; resume then starts it")
    func suspendBeforeResume() async throws {
        let delegate = EventDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: URL(string: "data:,later")!)
        task.suspend()
        #expect(task.state == .suspended)
        await settle(0.1)
        #expect(delegate.events(for: task).isEmpty)
        task.resume()
        task.resume()   // a second resume changes nothing
        #expect(await delegate.waitForCompletion(of: task))
        #expect(delegate.body(of: task) == Data("later".utf8))
        await settle(0.1)
        #expect(delegate.completionCount(of: task) == 1)
    }
}
