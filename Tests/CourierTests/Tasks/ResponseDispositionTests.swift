import Foundation
import Testing
@testable import Courier

@Suite("Response disposition")
struct ResponseDispositionTests {

    @Test(".cancel from didReceive response: completes with cancelled, the protocol is stopped, no data is delivered")
    func cancelDisposition() async throws {
        var hooks = EventDelegate.Hooks()
        hooks.response = { _, _, completion in completion(.cancel) }
        let delegate = EventDelegate(hooks)
        let session = ControlledURLProtocol.session(delegate: delegate)
        defer { session.invalidateAndCancel() }
        let url = ControlledURLProtocol.makeURL()
        let task = session.dataTask(with: url)
        task.resume()
        let server = try await ControlledURLProtocol.waitForStart(of: url)
        server.respond(headers: ["Content-Length": "4"])

        #expect(await delegate.waitForCompletion(of: task))
        #expect(await waitUntil { ControlledURLProtocol.stopCount(url) == 1 })
        server.send(Data("late".utf8))
        server.finish()
        await settle(0.2)
        #expect(delegate.collapsedNames(for: task) == ["response", "metrics", "complete"])
        #expect(delegate.body(of: task).isEmpty)
        let error = try #require(delegate.error(of: task) as? URLError)
        #expect(error.code == .cancelled)
        #expect(error.failingURL == url)
        #expect((task.error as? URLError)?.code == .cancelled)
        #expect(task.state == .completed)
        #expect(delegate.completionCount(of: task) == 1)
        #expect(delegate.eventsAfterCompletion.isEmpty)
    }

    @Test(".cancel also wins when the whole body already arrived (a 1 MB file)")
    func cancelDispositionAfterBodyArrived() async throws {
        let content = TestFiles.bytes(count: 1_000_000, seed: 31)
        let file = try TestFiles.make(content)
        defer { TestFiles.remove(file) }
        let pending = Locked<(@Sendable (URLSession.ResponseDisposition) -> Void)?>(nil)
        var hooks = EventDelegate.Hooks()
        hooks.response = { _, _, completion in pending.withLock { $0 = completion } }
        let delegate = EventDelegate(hooks)
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: file)
        task.resume()
        #expect(await waitUntil { pending.current != nil })
        #expect(await waitUntil { task.countOfBytesReceived == Int64(content.count) })
        pending.current?(.cancel)

        #expect(await delegate.waitForCompletion(of: task))
        #expect(!delegate.collapsedNames(for: task).contains("data"))
        #expect(delegate.body(of: task).isEmpty)
        #expect((delegate.error(of: task) as? URLError)?.code == .cancelled)
    }

    @Test("data waits until the delegate calls the response completion handler")
    func delayedDisposition() async throws {
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
        server.respond(headers: ["Content-Length": "10"])
        server.send(Data("01234".utf8))
        server.send(Data("56789".utf8))
        server.finish()

        #expect(await waitUntil { pending.current != nil })
        await settle(0.3)
        #expect(delegate.collapsedNames(for: task) == ["response"], "nothing after the response until the disposition")

        let answer = try #require(pending.current)
        answer(.allow)
        #expect(await delegate.waitForCompletion(of: task))
        #expect(delegate.collapsedNames(for: task) == ["response", "data", "metrics", "complete"])
        #expect(delegate.body(of: task) == Data("0123456789".utf8))
        #expect(delegate.error(of: task) == nil)
    }

    @Test("a disposition answered later from another thread works too")
    func dispositionFromAnotherThread() async throws {
        var hooks = EventDelegate.Hooks()
        hooks.response = { _, _, completion in
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { completion(.allow) }
        }
        let delegate = EventDelegate(hooks)
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: URL(string: "data:,later")!)
        task.resume()
        #expect(await delegate.waitForCompletion(of: task))
        #expect(delegate.body(of: task) == Data("later".utf8))
        #expect(delegate.queuesSeen == [ObjectIdentifier(session.delegateQueue)])
    }
}
