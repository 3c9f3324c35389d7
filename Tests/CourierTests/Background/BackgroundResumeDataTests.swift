import Foundation
import Testing
@testable import Courier

/// A background download that fails carries resume data, as on Apple's platforms, and
/// `downloadTask(withResumeData:)` in a background session continues it in the agent.
@Suite("Background resume data", .serialized)
struct BackgroundResumeDataTests {
    @Test("the resource timeout (from creation) fails a download with resume data; downloadTask(withResumeData:) finishes it with a Range request")
    func timedOutDownloadResumesInTheAgent() async throws {
        let nginx = try await NginxServer.shared()
        let sandbox = try BackgroundSandbox()
        defer { sandbox.remove() }
        let marker = UUID().uuidString
        let impatient = sandbox.configuration("resumed")
        impatient.timeoutIntervalForResource = 2
        let first = BackgroundRecorder()
        let session = URLSession(configuration: impatient, delegate: first, delegateQueue: nil)
        let task = session.downloadTask(with: nginx.url("/slow/big.bin?bg=\(marker)"))
        task.resume()
        let failed = await waitUntil { first.state.current.completions[task.taskIdentifier] != nil }
        session.finishTasksAndInvalidate()
        let error = first.state.current.completions[task.taskIdentifier] ?? nil
        let resumeData = try #require(error?.downloadTaskResumeData, "no resume data in \(String(describing: error))")
        let kept = sandbox.partialFiles

        let second = BackgroundRecorder()
        let patient = URLSession(configuration: sandbox.configuration("resumed"), delegate: second, delegateQueue: nil)
        defer { patient.invalidateAndCancel() }
        let resumed = patient.downloadTask(withResumeData: resumeData)
        resumed.resume()
        let done = await waitUntil(timeout: 90 * testTimeScale) { second.state.current.completions[resumed.taskIdentifier] != nil }
        let log = (try? String(contentsOf: nginx.prefix.appendingPathComponent("logs/access.log"), encoding: .utf8)) ?? ""
        let ranged = log.split(separator: "\n").contains { $0.contains("bg=\(marker)") && $0.contains("\" 206 ") }
        #expect(failed && error?.code == .timedOut && kept.count == 1 && resumed is BackgroundDownloadTask && done
                && second.state.current.files[resumed.taskIdentifier]?.hash == nginx.bigHash && ranged && sandbox.partialFiles.isEmpty)
    }
}
