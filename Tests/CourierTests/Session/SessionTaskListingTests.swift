import Foundation
import Testing
@testable import Courier

@Suite("Listing a session's tasks")
struct SessionTaskListingTests {

    @Test("a task cancelled before it was ever resumed is not listed once it has completed")
    func cancelledUnresumedTaskIsNotListed() async throws {
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let listed = OneShot<[Int]>()
        let task = session.dataTask(with: URL(string: "data:,never")!) { _, _, _ in
            // The task has completed: its handler runs. Nothing may list it any more.
            session.getAllTasks { tasks in listed.fulfil(tasks.map(\.taskIdentifier)) }
        }
        task.cancel()

        let ids = try await listed.wait()
        #expect(!ids.contains(task.taskIdentifier))
    }

    @Test("a data task that became a download task is not listed; the download task is")
    func becomeDownloadListsOnlyTheDownload() async throws {
        let listed = OneShot<(data: Bool, download: Bool)>()
        var hooks = EventDelegate.Hooks()
        hooks.response = { _, _, completionHandler in completionHandler(.becomeDownload) }
        hooks.becameDownload = { dataTask, downloadTask in
            // The data task is over from here on; the download task carries the load.
            dataTask.session?.getAllTasks { tasks in
                listed.fulfil((tasks.contains { $0 === dataTask }, tasks.contains { $0 === downloadTask }))
            }
        }
        let delegate = EventDelegate(hooks)
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        // A body that takes a while, so the download task is still running when the list is made.
        let server = try FaultServer(routes: ["/slow": .drip(body: Data("becomes a file".utf8), interval: 0.05)])
        defer { server.stop() }
        let task = session.dataTask(with: server.url("/slow"))
        task.resume()

        let seen = try await listed.wait()
        #expect(seen.data == false)
        #expect(seen.download == true)
    }

    @Test("allTasks lists the tasks not yet completed, never-resumed ones included, in creation order")
    func allTasksListsUnfinishedTasks() async throws {
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let url = URL(string: "data:,x")!
        let first = session.downloadTask(with: url)
        let cancelled = session.dataTask(with: url)
        let last = session.uploadTask(with: URLRequest(url: url), from: Data("u".utf8))
        cancelled.cancel()
        #expect(await waitUntil { cancelled.state == .completed })

        let ids = await session.allTasks.map(\.taskIdentifier)
        #expect(ids == [first.taskIdentifier, last.taskIdentifier])
    }

    @Test("allTasks is empty once every task has completed")
    func allTasksEmptyAfterCompletion() async throws {
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: URL(string: "data:,x")!)
        task.cancel()
        #expect(await waitUntil { task.state == .completed })

        #expect(await session.allTasks.isEmpty)
    }
}
