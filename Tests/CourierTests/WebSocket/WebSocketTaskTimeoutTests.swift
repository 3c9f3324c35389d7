import Foundation
import Testing
@testable import Courier

/// An open WebSocket has no idle timeout: the session's timeout timer stops ticking for it and only
/// wakes for its resource timeout.
@Suite("WebSocket task timeouts", .serialized)
struct WebSocketTaskTimeoutTests {
    /// An open task on the echo path, its session (invalidate it) and its recorder.
    private func openEcho(configure: (URLSessionConfiguration) -> Void = { _ in })
        async throws -> (URLSession, URLSessionWebSocketTask, WebSocketRecorder) {
        let server = try await WebSocketTestServer.shared()
        let recorder = WebSocketRecorder()
        let session = WebSocketTest.session(delegate: recorder, server: server, configure: configure)
        let task = session.webSocketTask(with: server.url("/echo"))
        task.resume()
        do {
            _ = try await recorder.opened()
        } catch {
            session.invalidateAndCancel()
            throw error
        }
        return (session, task, recorder)
    }

    @Test func anOpenWebSocketLetsTheTimeoutTimerSleep() async throws {
        let (session, task, _) = try await openEcho()
        defer { session.invalidateAndCancel() }
        let sleeping = await waitUntil {
            if case .sleeping = session.timeoutMonitor.currentMode { return true }
            return false
        }
        #expect(sleeping && task.state == .running)
    }

    @Test func theResourceTimeoutStillEndsAnOpenWebSocket() async throws {
        let (session, _, recorder) = try await openEcho { $0.timeoutIntervalForResource = 1.5 }
        defer { session.invalidateAndCancel() }
        #expect((try await recorder.completion() as? URLError)?.code == .timedOut)
    }

    @Test func aLoadStartingMeanwhileMakesTheTimerTickAgain() async throws {
        let (session, task, _) = try await openEcho()
        defer { session.invalidateAndCancel() }
        _ = await waitUntil { session.timeoutMonitor.currentMode != .ticking }
        session.taskDidStartLoading(task)
        #expect(session.timeoutMonitor.currentMode == .ticking)
    }
}
