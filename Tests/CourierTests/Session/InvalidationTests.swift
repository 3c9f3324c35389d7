import Foundation
import Testing
@testable import Courier

@Suite("Session invalidation")
struct InvalidationTests {

    @Test("finishTasksAndInvalidate lets a running task finish, then didBecomeInvalidWithError(nil) once, then delegate is nil")
    func finishTasksAndInvalidate() async throws {
        let delegate = EventDelegate()
        let session = ControlledURLProtocol.session(delegate: delegate)
        let url = ControlledURLProtocol.makeURL()
        let task = session.dataTask(with: url)
        task.resume()
        let server = try await ControlledURLProtocol.waitForStart(of: url)

        session.finishTasksAndInvalidate()
        session.finishTasksAndInvalidate()
        await settle(0.2)
        #expect(delegate.invalidationCount == 0, "not invalid while a task runs")
        #expect(session.delegate != nil)
        #expect(task.state == .running)

        server.complete(with: Data("finished".utf8))
        #expect(await delegate.waitForCompletion(of: task))
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == Data("finished".utf8))
        #expect(await delegate.waitForEvent { $0.name == "invalid" })
        #expect(delegate.events.last == .invalid(hasError: false))
        let names = delegate.events.map(\.name)
        let completed = try #require(names.firstIndex(of: "complete"))
        let invalidated = try #require(names.firstIndex(of: "invalid"))
        #expect(completed < invalidated)
        #expect(await waitUntil { session.delegate == nil })

        session.invalidateAndCancel()
        await settle(0.2)
        #expect(delegate.invalidationCount == 1)
    }

    @Test("finishTasksAndInvalidate with no tasks invalidates at once")
    func idleSession() async throws {
        let delegate = EventDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        session.finishTasksAndInvalidate()
        #expect(await delegate.waitForEvent { $0.name == "invalid" })
        #expect(await waitUntil { session.delegate == nil })
        await settle(0.1)
        #expect(delegate.invalidationCount == 1)
    }

    @Test("invalidateAndCancel cancels running tasks first, then invalidates")
    func invalidateAndCancel() async throws {
        let delegate = EventDelegate()
        let session = ControlledURLProtocol.session(delegate: delegate)
        let first = ControlledURLProtocol.makeURL("one")
        let second = ControlledURLProtocol.makeURL("two")
        let tasks = [session.dataTask(with: first), session.dataTask(with: second)]
        tasks.forEach { $0.resume() }
        _ = try await ControlledURLProtocol.waitForStart(of: first)
        _ = try await ControlledURLProtocol.waitForStart(of: second)

        session.invalidateAndCancel()
        #expect(await delegate.waitForEvent { $0.name == "invalid" })
        for task in tasks {
            #expect((delegate.error(of: task) as? URLError)?.code == .cancelled)
            #expect(delegate.completionCount(of: task) == 1)
        }
        let names = delegate.events.map(\.name)
        #expect(names.last == "invalid")
        #expect(names.filter { $0 == "complete" }.count == 2)
        #expect(await waitUntil { session.delegate == nil })
        #expect(await waitUntil { ControlledURLProtocol.stopCount(first) == 1 && ControlledURLProtocol.stopCount(second) == 1 })
    }

    @Test("a task created after invalidation fails with an error when resumed, without crashing")
    func taskAfterInvalidation() async throws {
        let delegate = EventDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        session.finishTasksAndInvalidate()
        #expect(await delegate.waitForEvent { $0.name == "invalid" })

        let url = URL(string: "data:,too-late")!
        let shot = OneShot<DataResult>()
        let task = session.dataTask(with: url) { data, response, error in
            shot.fulfil(DataResult(data: data, response: response, error: error))
        }
        task.resume()
        let result = try await shot.wait()
        #expect(result.error != nil)
        #expect(result.data == nil)
        #expect(task.state == .completed)

        let download = session.downloadTask(with: url)
        download.resume()
        await settle(0.2)
        #expect(download.state == .completed)
        #expect(download.error != nil)
    }

    @Test("URLSession.shared ignores finishTasksAndInvalidate and invalidateAndCancel")
    func sharedIgnoresInvalidation() async throws {
        let shared = URLSession.shared
        #expect(shared === URLSession.shared)
        shared.finishTasksAndInvalidate()
        shared.invalidateAndCancel()
        let result = try await shared.loadData(URL(string: "data:,still-works")!)
        #expect(result.error == nil)
        #expect(result.data == Data("still-works".utf8))
    }

    @Test("the session keeps its delegate until invalidated")
    func keepsDelegate() async throws {
        let weakDelegate = WeakRef<EventDelegate>()
        let session: URLSession
        do {
            let delegate = EventDelegate()
            weakDelegate.value = delegate
            session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        }
        #expect(weakDelegate.value != nil, "the session holds its delegate strongly")
        #expect(session.delegate === weakDelegate.value)
        session.finishTasksAndInvalidate()
        #expect(await waitUntil { session.delegate == nil })
        #expect(await waitUntil { weakDelegate.value == nil }, "the delegate is released after invalidation")
    }
}
