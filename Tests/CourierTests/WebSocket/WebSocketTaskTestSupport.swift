import Foundation
import Testing
@testable import Courier

/// Sessions and a recording delegate for the WebSocket task tests.
enum WebSocketTest {
    /// An ephemeral session with no proxy that trusts the test PKI's root (for wss).
    static func session(delegate: (any URLSessionDelegate)? = nil, server: WebSocketTestServer? = nil,
                        configure: (URLSessionConfiguration) -> Void = { _ in }) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.connectionProxyDictionary = [:]
        if let server { configuration.tlsTrustAnchors = TLSTrustAnchors(file: server.pki.rootCA.path) }
        configure(configuration)
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    /// Receives one message, bounded.
    static func receive(_ task: URLSessionWebSocketTask) async throws -> URLSessionWebSocketTask.Message {
        try await withTimeout(testWaitLimit, "a WebSocket message") { try await task.receive() }
    }

    /// Sends one message, bounded.
    static func send(_ message: URLSessionWebSocketTask.Message, on task: URLSessionWebSocketTask) async throws {
        try await withTimeout(testWaitLimit, "a WebSocket send") { try await task.send(message) }
    }

    /// The text of a text message (nil for binary).
    static func text(_ message: URLSessionWebSocketTask.Message) -> String? {
        if case .string(let text) = message { return text }
        return nil
    }

    /// The bytes of a binary message (nil for text).
    static func data(_ message: URLSessionWebSocketTask.Message) -> Data? {
        if case .data(let data) = message { return data }
        return nil
    }
}

/// Records what a WebSocket task tells its delegate.
final class WebSocketRecorder: NSObject, URLSessionWebSocketDelegate, @unchecked Sendable {
    struct Seen: Sendable {
        var opened: [String?] = []
        var closed: [(URLSessionWebSocketTask.CloseCode, Data?)] = []
        var completed: [(any Error)?] = []
        var events: [String] = []
        var challenges = 0
    }

    let seen = Locked(Seen())
    /// The answer to a server-trust challenge (default: reject).
    let trustAnswer = Locked<Bool>(false)

    func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol protocol: String?) {
        seen.withLock { $0.opened.append(`protocol`); $0.events.append("open") }
    }

    func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask,
                    didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?) {
        seen.withLock { $0.closed.append((closeCode, reason)); $0.events.append("close") }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        seen.withLock { $0.completed.append(error); $0.events.append("complete") }
    }

    func urlSession(_ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        seen.withLock { $0.challenges += 1 }
        if trustAnswer.current, let trust = challenge.protectionSpace.serverTrust {
            completionHandler(.useCredential, URLCredential(trust: trust))
        } else {
            completionHandler(.performDefaultHandling, nil)
        }
    }

    /// Waits (bounded) for the completion and returns its error.
    func completion() async throws -> (any Error)? {
        guard await waitUntil({ !self.seen.current.completed.isEmpty }) else { throw TestTimeout(what: "the task's completion") }
        return seen.current.completed[0]
    }

    /// Waits (bounded) for `didOpenWithProtocol` and returns the protocol.
    func opened() async throws -> String? {
        guard await waitUntil({ !self.seen.current.opened.isEmpty }) else { throw TestTimeout(what: "didOpenWithProtocol") }
        return seen.current.opened[0]
    }
}
