import Foundation
import Testing
@testable import Courier

/// A background download that fails, or is cancelled by `cancel(byProducingResumeData:)`, carries
/// resume data, as on Apple's platforms, and `downloadTask(withResumeData:)` in a background session
/// continues it in the agent.
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

        let finished = await Self.finishInNewSession(resumeData, identifier: "resumed", sandbox: sandbox, nginx: nginx, marker: marker)
        #expect(failed && error?.code == .timedOut, "\(String(describing: error))")
        #expect(kept.count == 1, "\(kept)")
        #expect(finished == .complete)
        #expect(sandbox.partialFiles.isEmpty, "\(sandbox.partialFiles)")
    }

    @Test("cancel(byProducingResumeData:) of a running background download hands the agent's resume data; downloadTask(withResumeData:) finishes it with a Range request")
    func cancelProducingResumeDataResumesInTheAgent() async throws {
        let nginx = try await NginxServer.shared()
        let sandbox = try BackgroundSandbox()
        defer { sandbox.remove() }
        let marker = UUID().uuidString
        let first = BackgroundRecorder()
        let session = URLSession(configuration: sandbox.configuration("kept"), delegate: first, delegateQueue: nil)
        let task = session.downloadTask(with: nginx.url("/slow/big.bin?bg=\(marker)"))
        task.resume()
        let started = await waitUntil { first.state.current.written >= 1 << 20 }
        let handed = Locked<Data??>(nil)
        task.cancel { data in handed.withLock { $0 = .some(data) } }
        let cancelled = await waitUntil {
            first.state.current.completions[task.taskIdentifier] != nil && handed.withLock({ $0 }) != nil
        }
        session.finishTasksAndInvalidate()
        let resumeData = try #require(handed.withLock({ $0 }) ?? nil, "cancel(byProducingResumeData:) handed no resume data")
        let error = first.state.current.completions[task.taskIdentifier] ?? nil
        let kept = sandbox.partialFiles

        let finished = await Self.finishInNewSession(resumeData, identifier: "kept", sandbox: sandbox, nginx: nginx, marker: marker)
        #expect(started && cancelled && error?.code == .cancelled && error?.downloadTaskResumeData == resumeData,
                "\(String(describing: error))")
        #expect(kept.count == 1, "\(kept)")
        #expect(finished == .complete)
        #expect(sandbox.partialFiles.isEmpty, "\(sandbox.partialFiles)")
    }

    /// How a download continued from resume data ended (each fact that ``finishInNewSession`` checks).
    private struct Continued: Equatable, CustomStringConvertible {
        /// The agent ran it: a background task.
        var inTheAgent: Bool
        /// Its completion was delivered within the wait.
        var completed: Bool
        /// The file is nginx's big file.
        var intact: Bool
        /// nginx logged a 206 for the request.
        var ranged: Bool

        /// Every fact holds.
        static let complete = Continued(inTheAgent: true, completed: true, intact: true, ranged: true)

        var description: String { "in the agent: \(inTheAgent), completed: \(completed), intact: \(intact), ranged: \(ranged)" }
    }

    /// Continues `resumeData` with `downloadTask(withResumeData:)` in a new session of `identifier`:
    /// whether the agent ran it (a background task), the file is nginx's big file, and nginx
    /// logged a 206 for the request tagged `marker`.
    private static func finishInNewSession(_ resumeData: Data, identifier: String, sandbox: BackgroundSandbox,
                                           nginx: NginxServer, marker: String) async -> Continued {
        let recorder = BackgroundRecorder()
        let session = URLSession(configuration: sandbox.configuration(identifier), delegate: recorder, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let resumed = session.downloadTask(withResumeData: resumeData)
        resumed.resume()
        let done = await waitUntil(timeout: 90 * testTimeScale) { recorder.state.current.completions[resumed.taskIdentifier] != nil }
        let log = (try? String(contentsOf: nginx.prefix.appendingPathComponent("logs/access.log"), encoding: .utf8)) ?? ""
        let ranged = log.split(separator: "\n").contains { $0.contains("bg=\(marker)") && $0.contains("\" 206 ") }
        return Continued(inTheAgent: resumed is BackgroundDownloadTask, completed: done,
                         intact: recorder.state.current.files[resumed.taskIdentifier]?.hash == nginx.bigHash, ranged: ranged)
    }
}
