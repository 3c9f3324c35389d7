import Foundation
import Testing
@testable import Courier

@Suite("Timeouts")
struct TimeoutTests {

    @Test("a protocol that never responds times out with timedOut after timeoutIntervalForRequest")
    func requestTimeout() async throws {
        let delegate = EventDelegate()
        let session = ControlledURLProtocol.session(delegate: delegate) { $0.timeoutIntervalForRequest = 0.5 }
        defer { session.invalidateAndCancel() }
        let url = ControlledURLProtocol.makeURL()
        let task = session.dataTask(with: url)
        task.resume()
        let server = try await ControlledURLProtocol.waitForStart(of: url)

        #expect(await delegate.waitForCompletion(of: task))
        let error = try #require(delegate.error(of: task) as? URLError)
        #expect(error.code == .timedOut)
        #expect(error.failingURL == url)
        #expect((task.error as? URLError)?.code == .timedOut)
        #expect(task.state == .completed)
        #expect(await waitUntil { ControlledURLProtocol.stopCount(url) == 1 })

        // A late answer from the stopped protocol is ignored.
        server.complete(with: Data("late".utf8))
        await settle(0.2)
        #expect(delegate.completionCount(of: task) == 1)
        #expect(delegate.eventsAfterCompletion.isEmpty)
        #expect(!delegate.collapsedNames(for: task).contains("response"))
    }

    @Test("a request's own timeoutInterval applies; completion handlers get timedOut too")
    func requestOwnTimeout() async throws {
        let session = ControlledURLProtocol.session()
        defer { session.invalidateAndCancel() }
        let url = ControlledURLProtocol.makeURL()
        var request = URLRequest(url: url)
        request.timeoutInterval = 0.5
        let result = try await session.loadData(request)
        #expect(result.urlError?.code == .timedOut)
        #expect(result.urlError?.failingURL == url)
        #expect(result.data == nil)
    }

    @Test("data arriving keeps resetting the idle timeout")
    func activityResetsIdleTimer() async throws {
        let delegate = EventDelegate()
        let session = ControlledURLProtocol.session(delegate: delegate) { $0.timeoutIntervalForRequest = 1.0 }
        defer { session.invalidateAndCancel() }
        let url = ControlledURLProtocol.makeURL()
        // Answered from startLoading and paced by a thread of its own, so a busy test process
        // cannot delay it.
        ControlledURLProtocol.whenStarted(url) { server in
            server.respond()
            Thread.detachNewThread {
                for _ in 0..<10 {
                    Thread.sleep(forTimeInterval: 0.15)
                    server.send(Data("x".utf8))
                }
                server.finish()
            }
        }
        let task = session.dataTask(with: url)
        task.resume()
        #expect(await delegate.waitForCompletion(of: task))
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == Data(repeating: UInt8(ascii: "x"), count: 10))
    }

    @Test("timeoutIntervalForResource bounds the whole load even while data flows")
    func resourceTimeout() async throws {
        let delegate = EventDelegate()
        let session = ControlledURLProtocol.session(delegate: delegate) { $0.timeoutIntervalForResource = 0.6 }
        defer { session.invalidateAndCancel() }
        let url = ControlledURLProtocol.makeURL()
        let task = session.dataTask(with: url)
        task.resume()
        let server = try await ControlledURLProtocol.waitForStart(of: url)
        server.respond()
        let stop = Locked(false)
        Thread.detachNewThread {
            for _ in 0..<200 where !stop.current {
                Thread.sleep(forTimeInterval: 0.05)
                server.send(Data("y".utf8))
            }
        }
        defer { stop.withLock { $0 = true } }
        #expect(await delegate.waitForCompletion(of: task))
        #expect((delegate.error(of: task) as? URLError)?.code == .timedOut)
    }
}
