import Foundation
import Testing
@testable import Courier

/// How tasks' drains reach the delegate queue (`TaskDrainScheduler`): on the session's own serial
/// queue, tasks that become ready together share one operation, in the order they became ready,
/// before any operation the app adds later; a queue the app suspends from a callback holds the rest;
/// a concurrent queue gets one operation per drain. `data:` tasks queue their completion inside
/// `resume()` (their handler starts on the resuming thread), so the tests know when each is ready.
@Suite("Task drain scheduling")
struct TaskDrainSchedulerTests {
    /// What the completion handlers saw: the task's number, and whether they ran on the delegate queue.
    private typealias Seen = Locked<[(index: Int, onDelegateQueue: Bool)]>

    /// Creates and resumes `count` `data:` tasks on `session`, recording into `seen`.
    private func resumeTasks(_ count: Int, on session: URLSession, into seen: Seen,
                             then: @escaping @Sendable (Int) -> Void = { _ in }) {
        let queue = UncheckedSendable(session.delegateQueue)
        for index in 0..<count {
            let url = URL(string: "data:,task-\(index)")!
            session.dataTask(with: url) { data, _, _ in
                let onQueue = OperationQueue.current === queue.value && data == Data("task-\(index)".utf8)
                seen.withLock { $0.append((index, onQueue)) }
                then(index)
            }.resume()
        }
    }

    @Test("tasks ready together share one operation of the session's queue, in order, before a later app operation")
    func readyTasksShareOneOperation() async throws {
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let queue = session.delegateQueue
        queue.isSuspended = true
        let seen = Seen([])
        resumeTasks(20, on: session, into: seen)
        #expect(queue.operationCount == 1)
        let appRanAfter = OneShot<Int>()
        queue.addOperation { appRanAfter.fulfil(seen.current.count) }
        queue.isSuspended = false
        #expect(try await appRanAfter.wait() == 20)
        let all = seen.current
        #expect(all.map { $0.index } == Array(0..<20))
        #expect(all.allSatisfy { $0.onDelegateQueue })
    }

    @Test("a queue the app suspends in a callback holds the rest of the batch until it resumes")
    func suspendingTheQueueHoldsTheRestOfTheBatch() async throws {
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let queue = UncheckedSendable(session.delegateQueue)
        queue.value.isSuspended = true
        let seen = Seen([])
        resumeTasks(3, on: session, into: seen) { index in
            if index == 0 { queue.value.isSuspended = true }
        }
        queue.value.isSuspended = false
        #expect(await waitUntil { seen.current.count == 1 })
        await settle(0.2)
        #expect(seen.current.count == 1)
        queue.value.isSuspended = false
        #expect(await waitUntil { seen.current.count == 3 })
        #expect(seen.current.map { $0.index } == [0, 1, 2])
        #expect(seen.current.allSatisfy { $0.onDelegateQueue })
    }

    @Test("a delegate queue that runs operations concurrently gets one operation per drain")
    func concurrentQueueGetsAnOperationPerDrain() async throws {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 4
        queue.isSuspended = true
        let session = URLSession(configuration: .ephemeral, delegate: nil, delegateQueue: queue)
        defer { session.invalidateAndCancel() }
        let seen = Seen([])
        resumeTasks(3, on: session, into: seen)
        #expect(queue.operationCount == 3)
        queue.isSuspended = false
        #expect(await waitUntil { seen.current.count == 3 })
        #expect(Set(seen.current.map { $0.index }) == [0, 1, 2])
        #expect(seen.current.allSatisfy { $0.onDelegateQueue })
    }
}
