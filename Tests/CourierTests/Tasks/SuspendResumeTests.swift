import Foundation
import Testing
@testable import Courier

@Suite("Suspend and resume")
struct SuspendResumeTests {

    @Test("a suspended running task delivers nothing until resumed, then everything")
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
        server.send(Data("def".utf8))
        server.finish()
        await settle(0.3)
        #expect(delegate.events(for: task).isEmpty, "got \(delegate.events(for: task)) while suspended")
        #expect(task.state == .suspended)

        task.resume()
        states.append(task.state)
        #expect(await delegate.waitForCompletion(of: task))
        states.append(task.state)
        #expect(states == [.suspended, .running, .suspended, .running, .completed])
        #expect(delegate.collapsedNames(for: task) == ["response", "data", "metrics", "complete"])
        #expect(delegate.body(of: task) == Data("abcdef".utf8))
        #expect(delegate.error(of: task) == nil)
    }

    @Test("a file download suspended from didWriteData pauses, then resumes to a complete file")
    func fileDownload() async throws {
        let content = TestFiles.bytes(count: 20 * 1024 * 1024, seed: 51)
        let file = try TestFiles.make(content)
        defer { TestFiles.remove(file) }
        let suspendedOnce = Locked(false)
        var hooks = EventDelegate.Hooks()
        hooks.wrote = { task, _, _, _ in
            let first = suspendedOnce.withLock { done -> Bool in
                defer { done = true }
                return !done
            }
            if first { task.suspend() }
        }
        let delegate = EventDelegate(hooks)
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.downloadTask(with: file)
        task.resume()

        #expect(await waitUntil { suspendedOnce.current })
        #expect(task.state == .suspended)
        let countWhenSuspended = delegate.events(for: task).count
        await settle(0.4)
        #expect(delegate.events(for: task).count == countWhenSuspended, "no callbacks while suspended")
        #expect(task.state == .suspended)
        #expect(!delegate.collapsedNames(for: task).contains("complete"))

        task.resume()
        #expect(await delegate.waitForCompletion(of: task))
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.download(of: task)?.content == content)
        let totals = delegate.events(for: task).compactMap { event -> Int64? in
            if case .wrote(_, _, let total, _) = event { return total }
            return nil
        }
        #expect(totals.last == Int64(content.count))
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
