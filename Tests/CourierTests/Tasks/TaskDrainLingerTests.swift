import Foundation
import Testing
@testable import Courier

/// The batch operation of a session's own delegate queue lingers for the next task
/// (`TaskDrainScheduler`, `SessionDelegateQueue`): a task that becomes ready while it lingers is
/// drained by it, and anything the app does with the queue (an operation, a wait, a suspension)
/// wins over the lingering. The tests lengthen the linger to 30 s, so that what they see is the
/// lingering and not a timing accident: whatever must happen "at once" happens within the tests'
/// wait limit, a third of that. `data:` tasks queue their completion inside `resume()`.
@Suite("Task drain lingering")
struct TaskDrainLingerTests {
    private static let longLinger: DispatchTimeInterval = .seconds(30)

    /// A session whose batch operation lingers ``longLinger``.
    private func lingeringSession() -> URLSession {
        let session = URLSession(configuration: .ephemeral)
        session.drains.setLingerTime(Self.longLinger)
        return session
    }

    /// Ends the test's session and the lingering operation.
    private func finish(_ session: URLSession) {
        session.invalidateAndCancel()
        session.delegateQueue.waitUntilAllOperationsAreFinished()
    }

    /// Resumes a `data:` task whose handler records `label` into `order`; returns what it got.
    @discardableResult
    private func run(_ label: String, on session: URLSession, into order: Locked<[String]>) -> OneShot<Bool> {
        let done = OneShot<Bool>()
        let queue = UncheckedSendable(session.delegateQueue)
        session.dataTask(with: URL(string: "data:,\(label)")!) { data, _, _ in
            order.withLock { $0.append(label) }
            done.fulfil(OperationQueue.current === queue.value && data == Data(label.utf8))
        }.resume()
        return done
    }

    /// The operation that lingers on `queue` (the only one queued), once it is there.
    private func lingeringOperation(on queue: OperationQueue) async -> ObjectIdentifier? {
        await settle(0.1)
        let operations = queue.operations
        guard operations.count == 1, let only = operations.first, only.isExecuting else { return nil }
        return ObjectIdentifier(only)
    }

    @Test("a task resumed while the batch operation lingers is drained by that same operation")
    func lingeringOperationDrainsTheNextTask() async throws {
        let session = lingeringSession()
        defer { finish(session) }
        let order = Locked<[String]>([])
        #expect(try await run("first", on: session, into: order).wait())
        let lingering = try #require(await lingeringOperation(on: session.delegateQueue))
        #expect(try await run("second", on: session, into: order).wait())
        #expect(await lingeringOperation(on: session.delegateQueue) == lingering)
        #expect(order.current == ["first", "second"])
    }

    @Test("an operation the app adds while the batch operation lingers runs at once")
    func appOperationEndsTheLinger() async throws {
        let session = lingeringSession()
        defer { finish(session) }
        let order = Locked<[String]>([])
        #expect(try await run("task", on: session, into: order).wait())
        #expect(await lingeringOperation(on: session.delegateQueue) != nil)
        let appRan = OneShot<Bool>()
        session.delegateQueue.addOperation { appRan.fulfil(true) }
        #expect(try await appRan.wait())
        #expect(await waitUntil { session.delegateQueue.operationCount == 0 })
    }

    @Test("waiting for the delegate queue to empty does not wait for the lingering")
    func waitingForTheQueueEndsTheLinger() async throws {
        let session = lingeringSession()
        defer { finish(session) }
        let order = Locked<[String]>([])
        #expect(try await run("task", on: session, into: order).wait())
        #expect(await lingeringOperation(on: session.delegateQueue) != nil)
        let queue = UncheckedSendable(session.delegateQueue)
        let waited = OneShot<Bool>()
        Thread.detachNewThread {
            queue.value.waitUntilAllOperationsAreFinished()
            waited.fulfil(true)
        }
        #expect(try await waited.wait())
    }

    @Test("a task that becomes ready while the batch operation lingers on a suspended queue waits for the queue")
    func suspendedQueueHoldsTheTask() async throws {
        let session = lingeringSession()
        defer { finish(session) }
        let order = Locked<[String]>([])
        #expect(try await run("first", on: session, into: order).wait())
        #expect(await lingeringOperation(on: session.delegateQueue) != nil)
        session.delegateQueue.isSuspended = true
        let second = run("second", on: session, into: order)
        await settle(0.3)
        #expect(second.value == nil)
        session.delegateQueue.isSuspended = false
        #expect(try await second.wait())
        #expect(order.current == ["first", "second"])
    }

    @Test("a task that became ready while the batch drained runs before an operation the app adds after it")
    func taskReadyDuringTheDrainRunsBeforeALaterAppOperation() async throws {
        let session = lingeringSession()
        defer { finish(session) }
        let order = Locked<[String]>([])
        let queue = UncheckedSendable(session.delegateQueue)
        let appRan = OneShot<Bool>()
        let inner = Locked<OneShot<Bool>?>(nil)
        let done = OneShot<Bool>()
        session.dataTask(with: URL(string: "data:,outer")!) { _, _, _ in
            order.withLock { $0.append("outer") }
            // Ready now, while this batch drains; the app's operation comes after it.
            inner.withLock { $0 = self.run("inner", on: session, into: order) }
            queue.value.addOperation {
                order.withLock { $0.append("app") }
                appRan.fulfil(true)
            }
            done.fulfil(true)
        }.resume()
        #expect(try await done.wait())
        #expect(try await appRan.wait())
        #expect(try await #require(inner.current).wait())
        #expect(order.current == ["outer", "inner", "app"])
    }

    @Test("tasks and app operations from many threads each run once, on the delegate queue")
    func manyThreadsRacingTheLinger() async throws {
        let session = URLSession(configuration: .ephemeral)
        defer { finish(session) }
        let queue = UncheckedSendable(session.delegateQueue)
        let tasksDone = Locked<[String: Int]>([:])
        let appOperations = Locked(0)
        let offQueue = Locked(0)
        let threads = 6, perThread = 40
        for thread in 0..<threads {
            Thread.detachNewThread {
                for index in 0..<perThread {
                    let label = "t\(thread)-\(index)"
                    let finished = DispatchSemaphore(value: 0)
                    session.dataTask(with: URL(string: "data:,\(label)")!) { data, _, _ in
                        if OperationQueue.current !== queue.value || data != Data(label.utf8) {
                            offQueue.withLock { $0 += 1 }
                        }
                        tasksDone.withLock { $0[label, default: 0] += 1 }
                        finished.signal()
                    }.resume()
                    if index % 5 == 0 { queue.value.addOperation { appOperations.withLock { $0 += 1 } } }
                    // Every other task waits for its completion, as a sequential client does.
                    if index % 2 == 0 { _ = finished.wait(timeout: .now() + testWaitLimit) }
                }
            }
        }
        #expect(await waitUntil { tasksDone.current.count == threads * perThread })
        #expect(await waitUntil { appOperations.current == threads * perThread / 5 })
        #expect(tasksDone.current.values.allSatisfy { $0 == 1 })
        #expect(offQueue.current == 0)
    }

    @Test("four sessions running requests one after another from four threads all finish (one lingers at a time)")
    func sessionsSideBySideAllFinish() async throws {
        let sessions = (0..<4).map { _ in URLSession(configuration: .ephemeral) }
        defer { sessions.forEach(finish) }
        let finished = Locked(0)
        let perSession = 100
        for (number, session) in sessions.enumerated() {
            Thread.detachNewThread {
                for index in 0..<perSession {
                    let done = DispatchSemaphore(value: 0)
                    session.dataTask(with: URL(string: "data:,s\(number)-\(index)")!) { data, _, _ in
                        if data == Data("s\(number)-\(index)".utf8) { finished.withLock { $0 += 1 } }
                        done.signal()
                    }.resume()
                    guard done.wait(timeout: .now() + testWaitLimit) == .success else { return }
                }
            }
        }
        #expect(await waitUntil { finished.current == sessions.count * perSession })
    }
}
