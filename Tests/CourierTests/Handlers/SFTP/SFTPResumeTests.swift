import Foundation
import Testing
@testable import Courier

/// Resumable sftp downloads: resume data carries the offset and the file's size and modification
/// time; an unchanged file continues at the offset, a changed one starts over.
extension SFTPTests {
    @Suite("SFTP resumable downloads")
    struct ResumeTests {
        /// A delegate that cancels its download with resume data once `threshold` bytes are written.
        private func cancellingDelegate(after threshold: Int, resumeData: OneShot<Data?>) -> EventDelegate {
            let cancelled = Locked(false)
            return EventDelegate(EventDelegate.Hooks(wrote: { task, _, total, _ in
                guard total >= Int64(threshold), !cancelled.withLock({ let was = $0; $0 = true; return was }) else { return }
                task.cancel(byProducingResumeData: { data in resumeData.fulfil(data) })
            }))
        }

        private func resumedEvents(_ delegate: EventDelegate, _ task: URLSessionTask) -> [(offset: Int64, expected: Int64)] {
            delegate.events(for: task).compactMap { event in
                if case .resumed(_, let offset, let expected) = event { return (offset, expected) }
                return nil
            }
        }

        @Test func cancelWithResumeDataThenResume() async throws {
            let server = try await SFTPTest.server()
            let resumeData = OneShot<Data?>()
            let delegate = cancellingDelegate(after: 2 << 20, resumeData: resumeData)
            let session = SFTPTest.session(server, delegate: delegate)
            defer { session.finishTasksAndInvalidate() }
            let first = session.downloadTask(with: server.url(SSHServer.Files.big, password: true))
            try await SFTPTest.run(first, delegate, timeout: 30)
            let data = try #require(try await resumeData.wait(timeout: 10), "no resume data")
            #expect(try SFTPTest.urlError(delegate.error(of: first)).code == .cancelled)

            let second = session.downloadTask(withResumeData: data)
            try await SFTPTest.run(second, delegate, timeout: 60)
            #expect(delegate.error(of: second) == nil)
            let resumed = resumedEvents(delegate, second)
            #expect(resumed.count == 1)
            #expect((resumed.first?.offset ?? 0) >= Int64(2 << 20))
            #expect(resumed.first?.expected == Int64(SSHServer.Files.bigSize))
            let content = try #require(delegate.download(of: second)?.content)
            #expect(content.count == SSHServer.Files.bigSize)
            #expect(StreamHash.of(content) == server.bigHash)
        }

        @Test func aChangedFileStartsOver() async throws {
            let server = try await SFTPTest.server()
            let name = "\(SSHServer.Files.uploads)/changing-\(UUID().uuidString).bin"
            let target = server.files.appendingPathComponent(name)
            try SFTPTest.randomBytes(8 << 20).write(to: target)
            let resumeData = OneShot<Data?>()
            let delegate = cancellingDelegate(after: 1 << 20, resumeData: resumeData)
            let session = SFTPTest.session(server, delegate: delegate)
            defer { session.finishTasksAndInvalidate() }
            let first = session.downloadTask(with: server.url(name, password: true))
            try await SFTPTest.run(first, delegate, timeout: 30)
            let data = try #require(try await resumeData.wait(timeout: 10), "no resume data")

            let replacement = try SFTPTest.randomBytes(3 << 20)
            try replacement.write(to: target)
            let second = session.downloadTask(withResumeData: data)
            try await SFTPTest.run(second, delegate, timeout: 30)
            #expect(delegate.error(of: second) == nil)
            #expect(resumedEvents(delegate, second).isEmpty)
            #expect(delegate.download(of: second)?.content == replacement, "the download started over, not spliced")
        }
    }
}
