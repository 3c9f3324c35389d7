import Foundation
import Testing
@testable import Courier

@Suite("Download tasks")
struct DownloadTaskTests {

    @Test("delegate: didWriteData… with correct totals → didFinishDownloadingTo → metrics → complete(nil)")
    func delegateOrderAndTotals() async throws {
        let content = TestFiles.bytes(count: 3 * 1024 * 1024 + 999, seed: 11)
        let file = try TestFiles.make(content)
        defer { TestFiles.remove(file) }
        let delegate = EventDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.downloadTask(with: file)
        task.resume()

        #expect(await delegate.waitForCompletion(of: task))
        // Where metrics fall is checked by `metricsAfterFinishedDownloading`.
        #expect(delegate.collapsedNames(for: task).filter { $0 != "metrics" } == ["wrote", "finishedDownload", "complete"])
        #expect(delegate.collapsedNames(for: task).contains("metrics"))
        #expect(delegate.events(for: task).last == .complete(task: task.taskIdentifier, code: nil))

        var sum: Int64 = 0
        var lastTotal: Int64 = 0
        for case .wrote(_, let bytes, let total, let expected) in delegate.events(for: task) {
            #expect(bytes > 0)
            sum += bytes
            #expect(total >= lastTotal)
            #expect(expected == Int64(content.count))
            lastTotal = total
        }
        // That each totalBytesWritten equals the running sum is checked by `totalsAreRunningSums`.
        #expect(sum == Int64(content.count))
        #expect(lastTotal == Int64(content.count))

        let observed = try #require(delegate.download(of: task))
        #expect(observed.existedDuringCall)
        #expect(observed.content == content)
        #expect(!FileManager.default.fileExists(atPath: observed.location.path), "the file is removed after didFinishDownloadingTo returns")
        #expect(task.countOfBytesReceived == Int64(content.count))
        #expect(task.countOfBytesExpectedToReceive == Int64(content.count))
        await settle(0.1)
        #expect(delegate.eventsAfterCompletion.isEmpty)
    }

    @Test("metrics arrive after didFinishDownloadingTo, just before didCompleteWithError")
    func metricsAfterFinishedDownloading() async throws {
        let delegate = EventDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.downloadTask(with: URL(string: "data:,order")!)
        task.resume()
        #expect(await delegate.waitForCompletion(of: task))
        #expect(delegate.collapsedNames(for: task) == ["wrote", "finishedDownload", "metrics", "complete"])
    }

    @Test("each didWriteData's totalBytesWritten is the sum of every bytesWritten so far")
    func totalsAreRunningSums() async throws {
        let content = TestFiles.bytes(count: 20 * 1024 * 1024, seed: 14)
        let file = try TestFiles.make(content)
        defer { TestFiles.remove(file) }
        let delegate = EventDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        for _ in 0..<3 {
            let task = session.downloadTask(with: file)
            task.resume()
            #expect(await delegate.waitForCompletion(of: task))
            var sum: Int64 = 0
            for case .wrote(_, let bytes, let total, _) in delegate.events(for: task) {
                sum += bytes
                #expect(total == sum, "totalBytesWritten is the running sum of bytesWritten")
            }
        }
    }

    @Test("a delegate may move the file away inside didFinishDownloadingTo and keep it")
    func delegateMovesFile() async throws {
        let content = TestFiles.bytes(count: 100_000, seed: 12)
        let file = try TestFiles.make(content)
        defer { TestFiles.remove(file) }
        let directory = try TestFiles.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let kept = directory.appendingPathComponent("kept.bin")
        var hooks = EventDelegate.Hooks()
        hooks.finishedDownload = { _, location in try? FileManager.default.moveItem(at: location, to: kept) }
        let delegate = EventDelegate(hooks)
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.downloadTask(with: file)
        task.resume()
        #expect(await delegate.waitForCompletion(of: task))
        #expect(delegate.error(of: task) == nil)
        #expect(try Data(contentsOf: kept) == content)
    }

    @Test("completion handler: the file exists during the handler, holds the body, and is removed after")
    func completionHandler() async throws {
        let content = TestFiles.bytes(count: 1_500_000, seed: 13)
        let file = try TestFiles.make(content)
        defer { TestFiles.remove(file) }
        let delegate = EventDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let shot = OneShot<DownloadResult>()
        let task = session.downloadTask(with: file) { location, response, error in
            let content = location.flatMap { try? Data(contentsOf: $0) }
            shot.fulfil(DownloadResult(location: location, response: response, error: error, contentDuringHandler: content))
        }
        task.resume()
        let result = try await shot.wait()
        #expect(result.error == nil)
        #expect(result.contentDuringHandler == content)
        #expect(result.response?.expectedContentLength == Int64(content.count))
        let location = try #require(result.location)
        #expect(await waitUntil(timeout: 5) { !FileManager.default.fileExists(atPath: location.path) })
        await settle(0.1)
        // No download delivery calls with a completion handler; the metrics still reach the delegate.
        #expect(delegate.events(for: task).map(\.name) == ["metrics"])
    }

    @Test("a data: URL downloads too, and an empty body gives an empty file")
    func dataURLAndEmpty() async throws {
        let delegate = EventDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let small = session.downloadTask(with: URL(string: "data:;base64,SGVsbG8=")!)
        let empty = session.downloadTask(with: URL(string: "data:,")!)
        small.resume()
        empty.resume()
        #expect(await delegate.waitForCompletions(2))
        #expect(delegate.download(of: small)?.content == Data("Hello".utf8))
        #expect(delegate.download(of: empty)?.existedDuringCall == true)
        #expect(delegate.download(of: empty)?.content == Data())
        #expect(delegate.error(of: small) == nil)
        #expect(delegate.error(of: empty) == nil)
    }

    @Test("a failed download calls didCompleteWithError only, with failingURL set")
    func failure() async throws {
        let directory = try TestFiles.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appendingPathComponent("missing.bin")
        let delegate = EventDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.downloadTask(with: missing)
        task.resume()
        #expect(await delegate.waitForCompletion(of: task))
        let error = try #require(delegate.error(of: task) as? URLError)
        #expect(error.code == .fileDoesNotExist)
        #expect(error.failingURL == missing)
        #expect(!delegate.collapsedNames(for: task).contains("finishedDownload"))
        #expect(delegate.collapsedNames(for: task).last == "complete")
    }
}
