import Foundation
import Testing
@testable import Courier

/// FTP listings stream as the server sends them, and are capped (``DirectoryListingLimits``): an
/// endless reply fails at the cap with bounded memory and time, and entries arrive before the reply
/// ends.
@Suite("FTP listing streaming", .serialized)
struct FTPListingStreamingTests {
    /// Counts a data task's listing bytes and keeps only the first 64 KiB, so an endless listing costs
    /// the test no memory.
    final class LineCounter: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        struct State {
            var bytes = 0
            var head = Data()
            var error: (any Error)?
            var completed = false
        }
        let state = Locked(State())

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            state.withLock { state in
                state.bytes += data.count
                if state.head.count < 64 << 10 { state.head.append(data.prefix((64 << 10) - state.head.count)) }
            }
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            state.withLock {
                $0.error = error
                $0.completed = true
            }
        }

        /// The entries decoded from the first complete lines received.
        var firstEntries: [URLDirectoryEntry] {
            let head = state.current.head
            guard let end = head.lastIndex(of: 0x0A) else { return [] }
            return (try? URLDirectoryListing.decode(head[...end])) ?? []
        }
    }

    /// The resident memory of this process, in bytes (Linux `/proc/self/statm`).
    private static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    @Test func anEndlessListingFailsAtTheCapWithBoundedMemory() async throws {
        let server = try await FTPTest.servers()
        let counter = LineCounter()
        let session = FTPTest.session(delegate: counter)
        defer { session.invalidateAndCancel() }
        let url = server.url(FTPTestServer.Files.endlessListing, server: .listings)
        let before = Self.residentBytes()
        let task = session.dataTask(with: url)
        task.resume()
        let completed = await waitUntil(timeout: 120) { counter.state.current.completed }
        if !completed { task.cancel() }
        let growth = Self.residentBytes() - before
        let error = try #require(counter.state.current.error as? URLError, "the endless listing did not fail within 120 s")
        #expect(error.code == .dataLengthExceedsMaximum)
        #expect(error.failingURL == url)
        #expect(growth < 64 << 20, "memory grew by \(growth) bytes")
        #expect(counter.state.current.bytes > 1 << 20, "entries were delivered before the cap")
    }

    @Test func entriesArriveBeforeTheReplyEnds() async throws {
        let server = try await FTPTest.servers()
        let counter = LineCounter()
        let session = FTPTest.session(delegate: counter)
        defer { session.invalidateAndCancel() }
        // The server sends the first entries, then nothing for a minute.
        let task = session.dataTask(with: server.url(FTPTestServer.Files.stalledListing, server: .listings))
        task.resume()
        let early = FTPTestServer.Files.stalledListingEarlyEntries
        await waitUntil(timeout: 20) { counter.firstEntries.count >= early }
        task.cancel()
        #expect(counter.firstEntries.map(\.name) == (0..<early).map { "early-\($0)" })
    }
}
