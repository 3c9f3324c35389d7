import Foundation
import Testing
@testable import Courier

@Suite("Data task delegate order")
struct DataTaskDelegateOrderTests {

    @Test("data: task: response → data → metrics → complete(nil), on the delegate queue")
    func dataURLOrder() async throws {
        let delegate = EventDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: URL(string: "data:text/plain,hello%20world")!)
        task.resume()

        #expect(await delegate.waitForCompletion(of: task))
        #expect(delegate.collapsedNames(for: task) == ["response", "data", "metrics", "complete"])
        #expect(delegate.events(for: task).last == .complete(task: task.taskIdentifier, code: nil))
        #expect(String(decoding: delegate.body(of: task), as: UTF8.self) == "hello world")
        #expect(delegate.response(of: task)?.mimeType == "text/plain")
        #expect(delegate.queuesSeen == [ObjectIdentifier(session.delegateQueue)])
        #expect(delegate.callsOffAnyQueue == 0)
        #expect(task.state == .completed)
        #expect(task.error == nil)

        await settle()
        #expect(delegate.eventsAfterCompletion.isEmpty)
        #expect(delegate.completionCount(of: task) == 1)
    }

    @Test("file: task of several chunks: every byte, in order, between response and metrics")
    func fileChunksOrder() async throws {
        let content = TestFiles.bytes(count: 3 * 1024 * 1024 + 123, seed: 7)
        let file = try TestFiles.make(content)
        defer { TestFiles.remove(file) }
        let delegate = EventDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: file)
        task.resume()

        #expect(await delegate.waitForCompletion(of: task))
        #expect(delegate.collapsedNames(for: task) == ["response", "data", "metrics", "complete"])
        #expect(delegate.events(for: task).filter { $0.name == "data" }.count > 1)
        #expect(delegate.body(of: task) == content)
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.response(of: task)?.expectedContentLength == Int64(content.count))
        await settle(0.1)
        #expect(delegate.eventsAfterCompletion.isEmpty)
    }

    @Test("a queue given to the session runs every delegate call and completion handler")
    func givenQueue() async throws {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "courier-tests.given-queue"
        let delegate = EventDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: queue)
        defer { session.invalidateAndCancel() }
        #expect(session.delegateQueue === queue)

        let task = session.dataTask(with: URL(string: "data:,abc")!)
        task.resume()
        #expect(await delegate.waitForCompletion(of: task))
        #expect(delegate.queuesSeen == [ObjectIdentifier(queue)])

        let result = try await session.loadData(URL(string: "data:,xyz")!)
        #expect(result.queue === queue)
        #expect(result.data == Data("xyz".utf8))
    }

    @Test("calls for one session never overlap, even with many tasks at once")
    func neverConcurrent() async throws {
        let content = TestFiles.bytes(count: 2 * 1024 * 1024 + 17, seed: 3)
        let file = try TestFiles.make(content)
        defer { TestFiles.remove(file) }
        var hooks = EventDelegate.Hooks()
        hooks.callbackDelay = 0.001
        let delegate = EventDelegate(hooks)
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }

        var tasks: [URLSessionTask] = []
        for index in 0..<3 {
            tasks.append(session.dataTask(with: file))
            tasks.append(session.downloadTask(with: file))
            tasks.append(session.dataTask(with: URL(string: "data:,task\(index)")!))
        }
        tasks.forEach { $0.resume() }

        #expect(await delegate.waitForCompletions(tasks.count))
        #expect(delegate.maxConcurrentCallbacks == 1)
        #expect(delegate.queuesSeen == [ObjectIdentifier(session.delegateQueue)])
        for task in tasks {
            #expect(delegate.error(of: task) == nil)
            #expect(delegate.completionCount(of: task) == 1)
            if task is URLSessionDownloadTask {
                #expect(delegate.download(of: task)?.content == content)
            } else if task.originalRequest?.url?.isFileURL == true {
                #expect(delegate.body(of: task) == content)
            }
        }
        await settle(0.1)
        #expect(delegate.eventsAfterCompletion.isEmpty)
    }

    @Test("a task with a completion handler gets no response, data or completion delegate calls")
    func completionHandlerBypassesDelegate() async throws {
        let delegate = EventDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let shot = OneShot<DataResult>()
        let task = session.dataTask(with: URL(string: "data:,handled")!) { data, response, error in
            shot.fulfil(DataResult(data: data, response: response, error: error, queue: OperationQueue.current))
        }
        task.resume()
        let result = try await shot.wait()
        #expect(result.data == Data("handled".utf8))
        #expect(result.error == nil)
        #expect(result.response?.url == URL(string: "data:,handled"))
        #expect(result.queue === session.delegateQueue)

        await settle(0.2)
        // Apple still sends the session delegate didFinishCollecting metrics for a task with a
        // completion handler; nothing else.
        #expect(delegate.events(for: task).map(\.name) == ["metrics"])
        #expect(shot.callCount == 1)
    }

    @Test("a task's own delegate receives its messages instead of the session's delegate")
    func taskDelegateWins() async throws {
        let sessionDelegate = EventDelegate()
        let taskDelegate = EventDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: sessionDelegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: URL(string: "data:,mine")!)
        task.delegate = taskDelegate
        task.resume()

        #expect(await taskDelegate.waitForCompletion(of: task))
        #expect(taskDelegate.collapsedNames(for: task) == ["response", "data", "metrics", "complete"])
        #expect(taskDelegate.body(of: task) == Data("mine".utf8))
        #expect(sessionDelegate.events(for: task).isEmpty)
    }

    @Test("metrics describe the task: one transaction with its request and response")
    func metricsContent() async throws {
        let delegate = EventDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let url = URL(string: "data:,metrics")!
        let task = session.dataTask(with: url)
        task.resume()
        #expect(await delegate.waitForCompletion(of: task))
        let metrics = try #require(delegate.metrics(of: task))
        #expect(metrics.redirectCount == 0)
        #expect(metrics.transactionMetrics.count == 1)
        #expect(metrics.transactionMetrics.first?.request.url == url)
        #expect(metrics.transactionMetrics.first?.response?.url == url)
        // The task's interval covers its one transaction, whose dates run in order.
        let transaction = try #require(metrics.transactionMetrics.first)
        let fetchStart = try #require(transaction.fetchStartDate)
        let responseStart = try #require(transaction.responseStartDate)
        let responseEnd = try #require(transaction.responseEndDate)
        #expect(metrics.taskInterval.start <= fetchStart)
        #expect(fetchStart <= responseStart)
        #expect(responseStart <= responseEnd)
        #expect(responseEnd <= metrics.taskInterval.end)
    }
}
