import Foundation
import Testing
@testable import Courier

/// Five sessions of a thousand http tasks each, every task cancelled right after it was resumed:
/// each completes once, tasks and sessions are freed, and Courier's threads return to where they were.
///
/// What this rules out: a thread or loop kept per abandoned task or session, and a task or session
/// kept alive by a cycle. Resident memory is not a measure here: glibc keeps freed memory in its
/// arenas (after such a storm `malloc_trim(0)` gives back nearly all of it), see Security.md.
@Suite("Cancel storm", .serialized)
struct CancelStormTests {

    private final class Weak: @unchecked Sendable {
        weak var object: AnyObject?
        init(_ object: AnyObject) { self.object = object }
    }

    @Test func fiveThousandCancelledTasksEndOnceAndLeaveNothingBehind() async throws {
        let nginx = try await HTTPTest.nginx()
        let threadsBefore = Self.threadNames().count
        let curlThreadsBefore = Self.threadNames().filter { $0 == "courier.curl" }.count
        let completions = Locked([Int: Int]())
        var tasks: [Weak] = []
        var sessions: [Weak] = []
        var peak = 0
        for round in 0..<5 {
            let session = HTTPTest.session()
            sessions.append(Weak(session))
            var strong: [URLSessionDataTask] = []
            for index in 0..<1000 {
                let key = round * 1000 + index
                let task = session.dataTask(with: nginx.url("/echo?\(key)")) { _, _, _ in
                    completions.withLock { $0[key, default: 0] += 1 }
                }
                strong.append(task)
                task.resume()
            }
            for task in strong { task.cancel() }
            peak = max(peak, Self.threadNames().count)
            tasks.append(contentsOf: strong.map(Weak.init))
            session.finishTasksAndInvalidate()
        }
        let (tasksToFree, sessionsToFree) = (tasks, sessions)
        #expect(await waitUntil(timeout: 30) { completions.withLock { $0.count } == 5000 })
        await settle(0.3)
        #expect(completions.withLock { $0.values.allSatisfy { $0 == 1 } }, "a task completed more than once")
        #expect(await waitUntil(timeout: 10) { tasksToFree.allSatisfy { $0.object == nil } }, "tasks are still alive")
        #expect(await waitUntil(timeout: 10) { sessionsToFree.allSatisfy { $0.object == nil } }, "sessions are still alive")
        // Courier's own threads (one curl loop per live session) are gone. GCD's shared worker pool,
        // which Swift concurrency uses too, grows under the storm's completions and keeps idle
        // workers for a while; a thread per task or per session would show far above these bounds.
        #expect(peak <= threadsBefore + 32, "threads: \(threadsBefore) before, \(peak) at the peak")
        #expect(await waitUntil(timeout: 10) { Self.threadNames().filter { $0 == "courier.curl" }.count <= curlThreadsBefore })
        #expect(await waitUntil(timeout: 10) { Self.threadNames().count <= threadsBefore + 16 },
                "threads: \(threadsBefore) before, \(Self.threadNames().count) after: \(Self.threadNames().sorted())")
    }

    private static func threadNames() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.map {
            ((try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8)) ?? "")
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }
}
