import Foundation
import Testing
@testable import Courier

/// `.becomeDownload`: a data task hands its load to a new download task.
@Suite("Response disposition .becomeDownload")
struct BecomeDownloadTests {
    /// Records the calls, and answers the response with `.becomeDownload`.
    final class Recorder: NSObject, URLSessionDataDelegate, URLSessionDownloadDelegate, @unchecked Sendable {
        let events = Locked<[String]>([])
        let file = Locked<Data?>(nil)
        let became = Locked<URLSessionDownloadTask?>(nil)
        let done = Locked(false)

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
            events.withLock { $0.append("response") }
            completionHandler(.becomeDownload)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            events.withLock { $0.append("data") }
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didBecome downloadTask: URLSessionDownloadTask) {
            events.withLock { $0.append("became") }
            became.withLock { $0 = downloadTask }
        }

        func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
            events.withLock { if $0.last != "wrote" { $0.append("wrote") } }
        }

        func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
            events.withLock { $0.append("finished") }
            file.withLock { $0 = try? Data(contentsOf: location) }
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            let kind = task is URLSessionDownloadTask ? "download" : "data"
            events.withLock { $0.append("complete \(kind) \(error == nil ? "ok" : "error")") }
            done.withLock { $0 = true }
        }
    }

    @Test("the body reaches the download task's file; the data task ends without a completion")
    func dataTaskBecomesDownload() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-become-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("body.bin")
        let body = Data((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try body.write(to: source)

        let recorder = Recorder()
        let session = URLSession(configuration: .ephemeral, delegate: recorder, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        let dataTask = session.dataTask(with: source)
        dataTask.resume()
        #expect(await waitUntil { recorder.done.withLock { $0 } })

        let events = recorder.events.withLock { $0 }
        #expect(events.first == "response")
        #expect(events.dropFirst().first == "became")
        #expect(!events.contains("data"))
        #expect(events.suffix(2) == ["finished", "complete download ok"])
        #expect(!events.contains("complete data ok"))
        #expect(recorder.file.withLock { $0 } == body)
        let download = try #require(recorder.became.withLock { $0 })
        #expect(download.taskIdentifier != dataTask.taskIdentifier)
        #expect(download.state == .completed)
        #expect(dataTask.state == .completed)
    }
}
