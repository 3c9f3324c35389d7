import Foundation
import Testing
@testable import Courier

@Suite("Task properties")
struct TaskPropertiesTests {

    @Test("taskIdentifier is unique and increasing within a session, for every kind of task")
    func identifiers() {
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let url = URL(string: "data:,x")!
        let tasks: [URLSessionTask] = [
            session.dataTask(with: url),
            session.uploadTask(with: URLRequest(url: url), from: Data()),
            session.downloadTask(with: url),
            session.dataTask(with: url) { _, _, _ in },
            session.downloadTask(withResumeData: Data()),
        ]
        let ids = tasks.map(\.taskIdentifier)
        #expect(Set(ids).count == ids.count)
        #expect(ids == ids.sorted())
        tasks.forEach { $0.cancel() }
    }

    @Test("identifiers stay unique when tasks are created from many threads at once")
    func identifiersConcurrent() {
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let ids = Locked<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 200) { _ in
            let task = session.dataTask(with: URL(string: "data:,x")!)
            ids.withLock { $0.append(task.taskIdentifier) }
        }
        #expect(Set(ids.current).count == 200)
    }

    @Test("a new task: suspended, no response, no error, currentRequest == originalRequest")
    func freshTask() {
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let url = URL(string: "data:,fresh")!
        let task = session.dataTask(with: url)
        #expect(task.state == .suspended)
        #expect(task.response == nil)
        #expect(task.error == nil)
        #expect(task.originalRequest?.url == url)
        #expect(task.currentRequest?.url == url)
        #expect(task.countOfBytesReceived == 0)
        #expect(task.countOfBytesExpectedToReceive == NSURLSessionTransferSizeUnknown)
        #expect(task.priority == URLSessionTask.defaultPriority)
        task.cancel()
    }

    @Test("after loading: response, byte counts and progress are complete")
    func countersAndProgress() async throws {
        let content = TestFiles.bytes(count: 2_500_000, seed: 71)
        let file = try TestFiles.make(content)
        defer { TestFiles.remove(file) }
        let delegate = EventDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }

        let watched = session.dataTask(with: file)
        let progress = watched.progress          // taken before the task starts
        let unwatched = session.downloadTask(with: file)
        watched.resume()
        unwatched.resume()
        #expect(await delegate.waitForCompletions(2))

        for task in [watched, unwatched] {
            #expect(task.response?.url == file)
            #expect(task.response?.expectedContentLength == Int64(content.count))
            #expect(task.countOfBytesReceived == Int64(content.count))
            #expect(task.countOfBytesExpectedToReceive == Int64(content.count))
            #expect(task.progress.totalUnitCount == Int64(content.count))
            #expect(task.progress.completedUnitCount == Int64(content.count))
            #expect(task.progress.fractionCompleted == 1)
        }
        #expect(progress === watched.progress)
    }

    @Test("progress of a tiny data: task ends at fractionCompleted 1")
    func smallProgress() async throws {
        let delegate = EventDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: URL(string: "data:,12345")!)
        _ = task.progress
        task.resume()
        #expect(await delegate.waitForCompletion(of: task))
        #expect(task.progress.totalUnitCount == 5)
        #expect(task.progress.completedUnitCount == 5)
        #expect(task.progress.fractionCompleted == 1)
    }

    @Test("priority is clamped to 0...1; taskDescription round-trips; copy() is the task itself")
    func simpleProperties() throws {
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: URL(string: "data:,x")!)
        task.priority = 2
        #expect(task.priority == 1)
        task.priority = -1
        #expect(task.priority == 0)
        task.priority = URLSessionTask.highPriority
        #expect(task.priority == 0.75)
        #expect(URLSessionTask.lowPriority == 0.25)

        #expect(task.taskDescription == nil)
        task.taskDescription = "thumbnail 7"
        #expect(task.taskDescription == "thumbnail 7")

        let copy = try #require(task.copy() as? URLSessionDataTask)
        #expect(copy === task)
        task.cancel()
    }

    @Test("a task created with init() belongs to no session and does nothing when resumed")
    func detachedTask() async {
        let task = URLSessionDataTask()
        task.resume()
        await settle(0.1)
        #expect(task.state == .suspended)
        task.cancel()
    }

    @Test("httpAdditionalHeaders reach the protocol; the request's own header wins")
    func additionalHeaders() async throws {
        let session = EchoURLProtocol.session { $0.httpAdditionalHeaders = ["X-Extra": "from-config", "X-Both": "config"] }
        defer { session.invalidateAndCancel() }
        var request = URLRequest(url: EchoURLProtocol.makeURL())
        request.setValue("request", forHTTPHeaderField: "X-Both")
        let result = try await session.loadData(request)
        let response = try #require(result.response as? HTTPURLResponse)
        #expect(response.value(forHTTPHeaderField: "X-Echo-X-Extra") == "from-config")
        #expect(response.value(forHTTPHeaderField: "X-Echo-X-Both") == "request")
    }

    @Test("the configuration is copied: later changes do not affect the session; session.configuration is a fresh copy")
    func configurationCopies() async throws {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [EchoURLProtocol.self]
        configuration.httpAdditionalHeaders = ["X-Version": "1"]
        configuration.timeoutIntervalForRequest = 33
        let session = URLSession(configuration: configuration)
        defer { session.invalidateAndCancel() }
        configuration.httpAdditionalHeaders = ["X-Version": "2"]
        configuration.timeoutIntervalForRequest = 44
        configuration.protocolClasses = []

        let result = try await session.loadData(EchoURLProtocol.makeURL())
        #expect(result.error == nil)
        #expect((result.response as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-Echo-X-Version") == "1")

        let copy = session.configuration
        #expect(copy !== configuration)
        #expect(copy !== session.configuration)
        #expect(copy.timeoutIntervalForRequest == 33)
        copy.timeoutIntervalForRequest = 55
        #expect(session.configuration.timeoutIntervalForRequest == 33)
    }

    @Test("getAllTasks and getTasksWithCompletionHandler list the unfinished tasks by kind, on the delegate queue")
    func listingTasks() async throws {
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let url = URL(string: "data:,x")!
        let data = session.dataTask(with: url)
        let upload = session.uploadTask(with: URLRequest(url: url), from: Data("u".utf8))
        let download = session.downloadTask(with: url)
        let finished = try await session.loadData(url)
        #expect(finished.error == nil)

        let all = OneShot<([Int], Bool)>()
        session.getAllTasks { tasks in
            all.fulfil((tasks.map(\.taskIdentifier), OperationQueue.current === session.delegateQueue))
        }
        let (ids, onQueue) = try await all.wait()
        #expect(Set(ids) == Set([data, upload, download].map(\.taskIdentifier)))
        #expect(onQueue)

        let split = OneShot<([Int], [Int], [Int])>()
        session.getTasksWithCompletionHandler { dataTasks, uploadTasks, downloadTasks in
            split.fulfil((dataTasks.map(\.taskIdentifier), uploadTasks.map(\.taskIdentifier), downloadTasks.map(\.taskIdentifier)))
        }
        let lists = try await split.wait()
        #expect(lists.0 == [data.taskIdentifier])
        #expect(lists.1 == [upload.taskIdentifier])
        #expect(lists.2 == [download.taskIdentifier])

        [data, upload, download].forEach { $0.cancel() }
        #expect(await waitUntil { [data, upload, download].allSatisfy { $0.state == .completed } })
        let empty = OneShot<Int>()
        session.getAllTasks { empty.fulfil($0.count) }
        #expect(try await empty.wait() == 0)
    }
}
