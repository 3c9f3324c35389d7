import Foundation
import Testing
@testable import Courier

/// An open WebSocket has no idle timeout: the session's timeout timer stops ticking for it and only
/// wakes for its resource timeout.
@Suite("WebSocket task timeouts", .serialized)
struct WebSocketTaskTimeoutTests {
    @Test func anOpenWebSocketLetsTheTimeoutTimerSleep() async throws {
        let server = try await WebSocketTestServer.shared()
        let recorder = WebSocketRecorder()
        let session = WebSocketTest.session(delegate: recorder, server: server)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: server.url("/echo"))
        task.resume()
        _ = try await recorder.opened()
        let sleeping = await waitUntil {
            if case .sleeping = session.timeoutMonitor.currentMode { return true }
            return false
        }
        #expect(sleeping && task.state == .running)
    }

    @Test func theResourceTimeoutStillEndsAnOpenWebSocket() async throws {
        let server = try await WebSocketTestServer.shared()
        let recorder = WebSocketRecorder()
        let session = WebSocketTest.session(delegate: recorder, server: server) { $0.timeoutIntervalForResource = 1.5 }
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: server.url("/echo"))
        task.resume()
        _ = try await recorder.opened()
        #expect((try await recorder.completion() as? URLError)?.code == .timedOut)
    }

    @Test func aLoadStartingMeanwhileMakesTheTimerTickAgain() async throws {
        let server = try await WebSocketTestServer.shared()
        let recorder = WebSocketRecorder()
        let session = WebSocketTest.session(delegate: recorder, server: server)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: server.url("/echo"))
        task.resume()
        _ = try await recorder.opened()
        _ = await waitUntil { session.timeoutMonitor.currentMode != .ticking }
        session.taskDidStartLoading(task)
        #expect(session.timeoutMonitor.currentMode == .ticking)
    }
}
