import Foundation
import Testing
@testable import Courier

/// ``WebSocketTaskState`` without a connection: events in, actions out.
@Suite("WebSocket task state")
struct WebSocketTaskStateTests {
    /// A server frame (unmasked) carrying `payload` as one binary message.
    private static func binaryFrame(_ count: Int) -> Data {
        WebSocketFrameEncoder(role: .server).encode(WebSocketFrame(opcode: .binary, payload: Data(count: count)))
    }

    private static func readingChanges(_ actions: [WebSocketTaskState.Action]) -> [Bool] {
        actions.compactMap { if case .setReading(let on, _) = $0 { return on } else { return nil } }
    }

    @Test func sendsMadeBeforeTheOpenGoOutWhenItOpens() {
        var state = WebSocketTaskState(url: nil)
        let early = state.send(.string("a"), { _ in }) + state.sendPing({ _ in }) + state.send(.string("b"), { _ in })
        let opened = state.opened(selectedProtocol: "chat", initialBytes: Data())
        let writes = opened.filter { if case .write = $0 { return true } else { return false } }.count
        #expect(early.isEmpty && writes == 3)
    }

    @Test func readingStopsAtTheLimitAndResumesOnReceive() {
        var state = WebSocketTaskState(url: nil)
        _ = state.opened(selectedProtocol: nil, initialBytes: Data())
        let full = state.receivedBytes(Self.binaryFrame(WebSocketTaskState.bufferLimit))
        let resumed = state.receive { _ in }
        #expect(Self.readingChanges(full) == [false] && Self.readingChanges(resumed) == [true])
    }

    @Test func readingChangesAreNumberedInOrder() {
        var state = WebSocketTaskState(url: nil)
        _ = state.opened(selectedProtocol: nil, initialBytes: Data())
        let actions = state.receivedBytes(Self.binaryFrame(WebSocketTaskState.bufferLimit)) + state.receive { _ in }
            + state.receivedBytes(Self.binaryFrame(WebSocketTaskState.bufferLimit))
        let orders = actions.compactMap { if case .setReading(_, let order) = $0 { return order } else { return nil } }
        #expect(orders == [1, 2, 3])
    }

    @Test func aWaitingReceiveTakesTheNextMessage() {
        var state = WebSocketTaskState(url: nil)
        _ = state.opened(selectedProtocol: nil, initialBytes: Data())
        let waiting = state.receive { _ in }
        let delivered = state.receivedBytes(Self.binaryFrame(3))
        let receives = delivered.filter { if case .receive = $0 { return true } else { return false } }.count
        #expect(waiting.isEmpty && receives == 1 && state.bufferedByteCount == 0)
    }

    @Test func theTasksEndFailsWaitingOperationsButKeepsReceivedMessages() {
        var state = WebSocketTaskState(url: nil)
        _ = state.opened(selectedProtocol: nil, initialBytes: Data())
        _ = state.receivedBytes(Self.binaryFrame(2))
        _ = state.sendPing { _ in }
        let ended = state.taskEnded(with: URLError(.cancelled))
        let kept = state.receive { _ in }
        let failed = ended.filter { if case .complete(_, let error) = $0 { return error != nil } else { return false } }.count
        let received: Bool = kept.contains { if case .receive(_, .success) = $0 { return true } else { return false } }
        #expect(failed == 1 && received && state.closeCode == .abnormalClosure)
    }

    @Test func theServersCloseEndsWithItsCodeAndReason() {
        var state = WebSocketTaskState(url: nil)
        _ = state.opened(selectedProtocol: nil, initialBytes: Data())
        let close = WebSocketFrameEncoder(role: .server)
            .encode(WebSocketFrame(opcode: .close, payload: WebSocketCloseFrame(code: 1000, reason: Data("ok".utf8)).payload))
        let actions = state.receivedBytes(close)
        let finished = actions.contains { if case .finished(.closed) = $0 { return true } else { return false } }
        #expect(finished && state.closeCode == .normalClosure && state.closeReason == Data("ok".utf8))
    }
}
