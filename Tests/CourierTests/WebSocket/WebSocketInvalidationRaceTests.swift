import Foundation
import Testing
@testable import Courier

/// A session invalidated while its WebSocket task closes: the transport's close reaches the curl
/// loop while the loop stops, and no thread may hang on the transport's own lock
/// (Concurrency.md §3.3 (5)). The race's window is narrow and cannot be hit on demand: this runs
/// it many times; `CurlMultiLoopStoppingTests` checks the invariant that closes it.
@Suite("WebSocket invalidation race", .serialized)
struct WebSocketInvalidationRaceTests {
    private static let rounds = 30

    @Test("invalidateAndCancel racing cancel(with:reason:) with writes queued: every task completes and every loop thread ends")
    func invalidationRacingCloseLeavesNoThreadBehind() async throws {
        let server = try await WebSocketTestServer.shared()
        let loopThreadsBefore = SessionResourcesTests.threads(named: "courier.curl")
        var completed = 0
        for round in 0..<Self.rounds {
            let recorder = WebSocketRecorder()
            let session = WebSocketTest.session(delegate: recorder)
            let task = session.webSocketTask(with: server.url("/echo"))
            task.resume()
            try await WebSocketTest.send(.string("open \(round)"), on: task)
            _ = try await WebSocketTest.receive(task)
            // Bytes still queued when the close comes: the transport closes once they are out.
            for _ in 0..<4 { task.send(.data(Data(count: 256 * 1024))) { _ in } }
            let start = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                start.wait()
                task.cancel(with: .goingAway, reason: nil)
            }
            start.signal()
            if round.isMultiple(of: 2) { usleep(UInt32(round * 100)) }
            session.invalidateAndCancel()
            if await waitUntil({ !recorder.seen.current.completed.isEmpty }) { completed += 1 }
        }
        let loopsEnded = await waitUntil(timeout: 10) {
            SessionResourcesTests.threads(named: "courier.curl") <= loopThreadsBefore
        }
        #expect(completed == Self.rounds && loopsEnded,
                "\(completed) of \(Self.rounds) completed; loop threads \(SessionResourcesTests.threads(named: "courier.curl")), \(loopThreadsBefore) before")
    }
}
