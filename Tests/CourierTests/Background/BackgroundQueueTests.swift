import Foundation
import Testing
@testable import Courier

/// Many background tasks at once: 200 downloads over three identifiers in one agent, with
/// cancellation and invalidation, and the agent's memory while they are queued.
@Suite("Background queues", .serialized)
struct BackgroundQueueTests {
    private static let longWait = 90 * testTimeScale
    /// The agent's peak resident memory with 200 tasks: issue 14's 64 MiB, and 2.5 times that
    /// when the agent runs instrumented (``testRunIsInstrumented``). ThreadSanitizer keeps shadow
    /// memory (and meta-shadow for every lock and allocation) beside each page the agent touches:
    /// on 2026-11-27 this test's agent peaked at 44 MiB plain and 98 MiB under TSan (2.2×), so
    /// 2.5× leaves about the plain bound's margin (160 over 98 MiB; 64 over 44). (AddressSanitizer's shadow, redzones and 16 MiB
    /// quarantine, `scripts/test`, are expected within the same factor; not measured.) Still a
    /// real bound: an agent that held its 200 tasks' transfers or events in memory at once would
    /// exceed it under either.
    private static let peakRSSBound = (testRunIsInstrumented ? 5 : 2) * (32 << 20)

    /// One identifier's share of the 200 tasks.
    private struct Lane {
        let identifier: String
        let path: String
        let contents: Data
        let count: Int
        let session: URLSession
        let recorder: BackgroundRecorder
        /// Task identifier → whether the test cancels it (directly or by invalidation).
        var cancelled: [Int: Bool] = [:]
    }

    @Test("200 downloads over 3 identifiers: each sees exactly its own events, each once; cancelled ones end cancelled")
    func twoHundredDownloadsAcrossThreeIdentifiers() async throws {
        let nginx = try await NginxServer.shared()
        let sandbox = try BackgroundSandbox()
        defer { sandbox.remove() }
        // alpha cancels every fifth task, beta lets all finish, gamma is invalidated with
        // invalidateAndCancel while its odd tasks still wait. A task to be cancelled waits for
        // an earliestBeginDate an hour away, so it is certainly still queued then.
        let files = [("alpha", NginxServer.Files.hello, NginxServer.Files.helloContents, 67),
                     ("beta", NginxServer.Files.json, NginxServer.Files.jsonContents, 67),
                     ("gamma", NginxServer.Files.lines, try nginx.contents(of: NginxServer.Files.lines), 66)]
        var building = files.map { identifier, path, contents, count in
            let recorder = BackgroundRecorder()
            return Lane(identifier: identifier, path: path, contents: contents, count: count,
                        session: URLSession(configuration: sandbox.configuration(identifier), delegate: recorder, delegateQueue: nil),
                        recorder: recorder)
        }
        var tasksToCancel: [URLSessionTask] = []
        for index in building.indices {
            let lane = building[index]
            for number in 1...lane.count {
                let task = lane.session.downloadTask(with: nginx.url("\(lane.path)?n=\(number)"))
                let cancels = (lane.identifier == "alpha" && number % 5 == 0) || (lane.identifier == "gamma" && number % 2 == 1)
                if cancels { task.earliestBeginDate = Date().addingTimeInterval(3600) }
                building[index].cancelled[task.taskIdentifier] = cancels
                task.resume()
                if cancels, lane.identifier == "alpha" { tasksToCancel.append(task) }
            }
        }
        let lanes = building
        defer { for lane in lanes { lane.session.invalidateAndCancel() } }
        for task in tasksToCancel { task.cancel() }
        // gamma's immediate tasks first, then invalidateAndCancel for the waiting ones.
        let gamma = lanes[2]
        let gammaRan = await waitUntil(timeout: Self.longWait) {
            let completions = gamma.recorder.state.current.completions
            return gamma.cancelled.filter { !$0.value }.keys.allSatisfy { completions[$0] != nil }
        }
        gamma.session.invalidateAndCancel()
        let delivered = await waitUntil(timeout: Self.longWait) {
            lanes.allSatisfy { lane in lane.recorder.state.current.completions.count == lane.count }
        }
        let outcomes = lanes.map { lane -> Bool in
            let state = lane.recorder.state.current
            let expected = StreamHash.of(lane.contents)
            return state.completionCounts == lane.cancelled.mapValues { _ in 1 }
                && lane.cancelled.allSatisfy { task, cancelled in
                    cancelled ? (state.completions[task]??.code == .cancelled && state.files[task] == nil)
                        : (state.completions[task] == .some(nil) && state.files[task]?.hash == expected && state.fileCounts[task] == 1)
                }
        }
        #expect(gammaRan && delivered && outcomes == [true, true, true], "\(lanes.map { $0.recorder.state.current.completions.count })")
    }

    @Test("the agent's peak resident memory stays under 64 MiB (160 MiB instrumented) with 200 tasks queued and running")
    func agentMemoryWithTwoHundredTasks() async throws {
        let nginx = try await NginxServer.shared()
        let sandbox = try BackgroundSandbox()
        defer { sandbox.remove() }
        let recorder = BackgroundRecorder()
        let session = URLSession(configuration: sandbox.configuration("memory"), delegate: recorder, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        // All 200 are queued before any starts (they begin in 2 s), then run 16 at a time.
        let begin = Date().addingTimeInterval(2)
        for number in 1...200 {
            let task = session.downloadTask(with: nginx.url("\(NginxServer.Files.lines)?n=\(number)"))
            task.earliestBeginDate = begin
            task.resume()
        }
        let delivered = await waitUntil(timeout: Self.longWait) { recorder.state.current.completions.count == 200 }
        let peak = sandbox.agentPeakRSS ?? .max
        #expect(delivered)
        #expect(peak < Self.peakRSSBound, "peak RSS \(peak / 1024) KiB, bound \(Self.peakRSSBound / 1024) KiB")
    }
}
