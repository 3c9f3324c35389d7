import Foundation
import Testing
@testable import Courier

/// WebSocket tasks against an in-process raw server (``FaultServer``) that answers the handshake
/// badly or sends malformed frames, and reads the close frame the client sends back.
@Suite("WebSocket task faults")
struct WebSocketTaskFaultTests {
    /// A malformed frame and the close code RFC 6455 says the client answers it with.
    struct Violation: Sendable, CustomTestStringConvertible {
        var name: String
        var frame: [UInt8]
        var closeCode: UInt16
        var testDescription: String { name }
    }

    static let violations: [Violation] = [
        Violation(name: "masked server frame", frame: [0x81, 0x85, 1, 2, 3, 4] + [0x69, 0x67, 0x6F, 0x68, 0x6E], closeCode: 1002),
        Violation(name: "RSV1 without an extension", frame: [0xC1, 0x02, 0x68, 0x69], closeCode: 1002),
        Violation(name: "reserved opcode", frame: [0x83, 0x00], closeCode: 1002),
        Violation(name: "control frame over 125 bytes", frame: [0x89, 0x7E, 0x00, 0x7E] + [UInt8](repeating: 0x61, count: 126), closeCode: 1002),
        Violation(name: "fragmented control frame", frame: [0x09, 0x00], closeCode: 1002),
        Violation(name: "continuation without a start", frame: [0x80, 0x01, 0x61], closeCode: 1002),
        Violation(name: "text that is not UTF-8", frame: [0x81, 0x02, 0xC3, 0x28], closeCode: 1007),
        Violation(name: "one-byte close payload", frame: [0x88, 0x01, 0x03], closeCode: 1002),
        Violation(name: "close code not allowed on the wire", frame: [0x88, 0x02, 0x03, 0xE7], closeCode: 1002),
        Violation(name: "close reason that is not UTF-8", frame: [0x88, 0x04, 0x03, 0xE8, 0xC3, 0x28], closeCode: 1007),
        Violation(name: "message over the maximum size", frame: [0x82, 0x7F, 0, 0, 0, 0, 0, 1, 0x11, 0x70], closeCode: 1009),
    ]

    /// The 101 for a request, with `accept` in place of the right `Sec-WebSocket-Accept`.
    private static func upgrade(for request: FaultRequest, accept: String? = nil, upgrade: String? = "websocket") -> [(String, String)] {
        let key = request.header("Sec-WebSocket-Key") ?? ""
        var headers = [("Connection", "Upgrade"), ("Sec-WebSocket-Accept", accept ?? WebSocketHandshakeKey.acceptValue(for: key))]
        if let upgrade { headers.append(("Upgrade", upgrade)) }
        return headers
    }

    /// The status code of the first close frame in `bytes` (a client's, so masked).
    private static func closeCode(in bytes: Data) -> UInt16? {
        var decoder = WebSocketFrameDecoder(role: .server, maximumPayloadLength: 1 << 20)
        decoder.append(bytes)
        while let frame = try? decoder.nextFrame() {
            if frame.opcode == .close { return (try? WebSocketCloseFrame(payload: frame.payload))?.code }
        }
        return nil
    }

    @Test(arguments: violations)
    func aViolationIsAnsweredWithItsCloseCode(violation: Violation) async throws {
        let sent = Locked<Data?>(nil)
        let server = try FaultServer(routes: ["/ws": .custom { request, writer in
            writer.writeHead(status: 101, reason: "Switching Protocols", headers: Self.upgrade(for: request))
            writer.write(Data(violation.frame))
            sent.withLock { $0 = writer.read(atLeast: 4, within: 5) }
            return false
        }])
        defer { server.stop() }
        let recorder = WebSocketRecorder()
        let session = WebSocketTest.session(delegate: recorder)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: URL(string: "ws://127.0.0.1:\(server.port)/ws")!)
        task.maximumMessageSize = 65536
        task.resume()
        let error = try await recorder.completion()
        _ = await waitUntil { sent.current != nil }
        #expect(Self.closeCode(in: sent.current ?? Data()) == violation.closeCode && error is URLError
                && task.closeCode == .abnormalClosure)
    }

    @Test func aWrongAcceptFailsTheHandshake() async throws {
        let server = try FaultServer(routes: ["/ws": .custom { request, writer in
            writer.writeHead(status: 101, reason: "Switching Protocols", headers: Self.upgrade(for: request, accept: "bm90IHRoZSByaWdodCBvbmU="))
            writer.pause(2)
            return false
        }])
        defer { server.stop() }
        let recorder = WebSocketRecorder()
        let session = WebSocketTest.session(delegate: recorder)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: URL(string: "ws://127.0.0.1:\(server.port)/ws")!)
        task.resume()
        let error = try await recorder.completion()
        #expect((error as? URLError)?.code == .badServerResponse && (task.response as? HTTPURLResponse)?.statusCode == 101
                && recorder.seen.current.opened.isEmpty)
    }

    @Test func aMissingUpgradeFailsTheHandshake() async throws {
        let server = try FaultServer(routes: ["/ws": .custom { request, writer in
            writer.writeHead(status: 101, reason: "Switching Protocols", headers: Self.upgrade(for: request, upgrade: nil))
            writer.pause(2)
            return false
        }])
        defer { server.stop() }
        let recorder = WebSocketRecorder()
        let session = WebSocketTest.session(delegate: recorder)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: URL(string: "ws://127.0.0.1:\(server.port)/ws")!)
        task.resume()
        #expect((try await recorder.completion() as? URLError)?.code == .badServerResponse)
    }

    @Test func aServerThatClosesDuringTheHandshakeFailsTheTask() async throws {
        let server = try FaultServer(routes: ["/ws": .custom { _, _ in false }])
        defer { server.stop() }
        let recorder = WebSocketRecorder()
        let session = WebSocketTest.session(delegate: recorder)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: URL(string: "ws://127.0.0.1:\(server.port)/ws")!)
        task.resume()
        #expect((try await recorder.completion() as? URLError)?.code == .networkConnectionLost)
    }

    @Test func cancelDuringTheHandshake() async throws {
        let server = try FaultServer(routes: ["/ws": .custom { _, writer in
            writer.pause(5)
            return false
        }])
        defer { server.stop() }
        let recorder = WebSocketRecorder()
        let session = WebSocketTest.session(delegate: recorder)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: URL(string: "ws://127.0.0.1:\(server.port)/ws")!)
        task.resume()
        _ = await waitUntil { !server.requests(for: "/ws").isEmpty }
        task.cancel()
        let started = Date()
        let error = try await recorder.completion()
        #expect((error as? URLError)?.code == .cancelled && Date().timeIntervalSince(started) < 2)
    }

    @Test func aCloseThePeerNeverAnswersTimesOut() async throws {
        let server = try FaultServer(routes: ["/ws": .custom { request, writer in
            writer.writeHead(status: 101, reason: "Switching Protocols", headers: Self.upgrade(for: request))
            writer.pause(8)
            return false
        }])
        defer { server.stop() }
        let recorder = WebSocketRecorder()
        let session = WebSocketTest.session(delegate: recorder)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: URL(string: "ws://127.0.0.1:\(server.port)/ws")!)
        task.resume()
        _ = try await recorder.opened()
        task.cancel(with: .normalClosure, reason: Data("bye".utf8))
        let error = try await recorder.completion()
        #expect((error as? URLError)?.code == .timedOut && task.closeCode == .abnormalClosure)
    }

    @Test func aPingIsAnsweredWithItsPayload() async throws {
        let received = Locked<Data?>(nil)
        let server = try FaultServer(routes: ["/ws": .custom { request, writer in
            writer.writeHead(status: 101, reason: "Switching Protocols", headers: Self.upgrade(for: request))
            writer.write(Data([0x89, 0x03, 0x61, 0x62, 0x63]))
            received.withLock { $0 = writer.read(atLeast: 9, within: 5) }
            return false
        }])
        defer { server.stop() }
        let session = WebSocketTest.session()
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: URL(string: "ws://127.0.0.1:\(server.port)/ws")!)
        task.resume()
        _ = await waitUntil { received.current != nil }
        var decoder = WebSocketFrameDecoder(role: .server, maximumPayloadLength: 1024)
        decoder.append(received.current ?? Data())
        let frame = try decoder.nextFrame()
        #expect(frame?.opcode == .pong && frame?.payload == Data("abc".utf8))
    }
}
