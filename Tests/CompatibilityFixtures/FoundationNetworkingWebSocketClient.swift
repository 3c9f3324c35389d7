#if USE_FOUNDATION_NETWORKING
import FoundationNetworking
#else
import Courier
#endif
import Foundation

// A chat client written against FoundationNetworking's WebSocket tasks, as people write one: it
// must type-check unchanged against Courier (`scripts/check-source-compatibility`); it is never run.

/// Hears the connection open and close.
final class ChatDelegate: NSObject, URLSessionWebSocketDelegate, @unchecked Sendable {
    func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol protocol: String?) {
        print("open", `protocol` ?? "-")
    }

    func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask,
                    didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?) {
        print("closed", closeCode.rawValue, reason.map { String(decoding: $0, as: UTF8.self) } ?? "")
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        print("done", error as Any)
    }
}

/// A subclass, as some apps make to wrap the task.
final class LoggingWebSocketTask: NSObject {
    let task: URLSessionWebSocketTask
    init(task: URLSessionWebSocketTask) { self.task = task }
}

func describe(_ message: URLSessionWebSocketTask.Message) -> String {
    switch message {
    case .string(let text): return text
    case .data(let data): return "\(data.count) bytes"
    @unknown default: return "?"
    }
}

func listen(on task: URLSessionWebSocketTask) {
    task.receive { result in
        switch result {
        case .success(let message):
            print(describe(message))
            listen(on: task)
        case .failure(let error):
            print("receive failed", error)
        }
    }
}

func chat(session: URLSession) async {
    let url = URL(string: "wss://chat.example.com/socket")!
    let task = session.webSocketTask(with: url, protocols: ["chat.v1"])
    task.maximumMessageSize = 4 << 20
    task.resume()
    task.send(.string("hello")) { error in if let error { print(error) } }
    task.sendPing { error in print("pong", error as Any) }
    listen(on: task)
    do {
        try await task.send(.data(Data([1, 2, 3])))
        let reply = try await task.receive()
        print(describe(reply))
        try await task.sendPing()
    } catch {
        print(error)
    }
    let code: URLSessionWebSocketTask.CloseCode = .goingAway
    task.cancel(with: code, reason: "bye".data(using: .utf8))
    print(task.closeCode == .invalid, task.closeReason as Any, task.state == .completed, task.error as Any)

    var request = URLRequest(url: URL(string: "ws://127.0.0.1:8080/feed")!)
    request.setValue("Bearer token", forHTTPHeaderField: "Authorization")
    let other = session.webSocketTask(with: request)
    other.resume()
    other.cancel()
    let plain: URLSessionWebSocketTask = session.webSocketTask(with: url)
    let wrapped = LoggingWebSocketTask(task: plain)
    print(wrapped.task.taskIdentifier, URLSessionWebSocketTask.CloseCode(rawValue: 1000) == .normalClosure)
}

@main
struct FoundationNetworkingWebSocketClient {
    static func main() async {
        let delegate = ChatDelegate()
        let session = URLSession(configuration: .default, delegate: delegate, delegateQueue: nil)
        await chat(session: session)
        session.invalidateAndCancel()
    }
}
