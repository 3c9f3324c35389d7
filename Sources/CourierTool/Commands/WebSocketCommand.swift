import ArgumentParser
import Courier
import Foundation

/// `courier ws URL`: a WebSocket client in the manner of websocat. Each line of standard input is
/// sent as a text message; each message received is printed on a line of its own — text as it is,
/// binary as `base64:` followed by its base64. At the end of standard input the tool waits until
/// the server has been quiet for ``quietPeriod`` (its replies arrive), then closes the connection
/// with 1000 (normal closure) and waits for the server's close frame.
struct WebSocketCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ws",
        abstract: "Send standard input's lines as WebSocket text messages and print the messages received.",
        usage: "courier ws [-H <Name: value> ...] [--protocol <name> ...] [-k] <url>",
        discussion: """
            Text messages are printed as they are, binary messages as `base64:` and their base64, \
            one message a line. At the end of standard input, once every line was sent and the \
            server has sent nothing for half a second, the connection is closed (code 1000). A close \
            by the server is reported on standard error with its \
            code and reason. Exit status: 0 after a close handshake; otherwise the status of the \
            error (as for fetches).
            """
    )

    @Option(name: [.customShort("H"), .long], help: ArgumentHelp("Add a handshake request header; repeatable.", valueName: "Name: value"))
    var header: [String] = []

    @Option(name: .customLong("protocol"), help: ArgumentHelp("Offer this subprotocol; repeatable.", valueName: "name"))
    var protocols: [String] = []

    @Flag(name: [.customShort("k"), .customLong("insecure")], help: "Accept any TLS server certificate (wss).")
    var insecure = false

    @Argument(help: ArgumentHelp("The ws: or wss: URL.", valueName: "url"))
    var url: String

    /// How long the server must have been quiet after the end of standard input before the tool closes.
    static let quietPeriod: TimeInterval = 0.5

    /// Runs `courier ws` with `arguments` (the words after `ws`) and exits.
    static func main(arguments: [String]) async -> Never {
        await parseRunAndExit(arguments)
    }

    func validate() throws {
        guard let parsed = URL(string: url), ["ws", "wss"].contains(parsed.scheme?.lowercased() ?? "") else {
            throw ValidationError("\(url): not a ws: or wss: URL")
        }
        for text in header where RequestOptions.parseHeader(text) == nil {
            throw ValidationError("malformed header \"\(text)\" (expected \"Name: value\")")
        }
    }

    func run() async throws {
        guard let target = URL(string: url) else { throw ExitCode(ToolExit.badURL.rawValue) }
        var request = URLRequest(url: target)
        for text in header {
            guard let field = RequestOptions.parseHeader(text) else { continue }
            request.setValue(field.value, forHTTPHeaderField: field.name)
        }
        if !protocols.isEmpty {
            request.setValue(protocols.joined(separator: ", "), forHTTPHeaderField: "Sec-WebSocket-Protocol")
        }
        let delegate = WebSocketCommandDelegate(policy: TransferPolicy(insecure: insecure))
        let session = URLSession(configuration: .default, delegate: delegate, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        let task = session.webSocketTask(with: request)
        task.resume()
        let activity = WebSocketActivity()
        let printing = Task { await Self.printMessages(of: task, activity: activity) }
        let sending = Task { await Self.sendLines(to: task) }
        await sending.value
        await delegate.openedOrEnded()
        await activity.waitForQuiet(Self.quietPeriod, unless: { task.state == .completed })
        task.cancel(with: .normalClosure, reason: nil)
        await printing.value
        let error = await delegate.completion()
        if let closing = delegate.closing {
            let reason = closing.reason.map { String(decoding: $0, as: UTF8.self) } ?? ""
            Console.err("courier: closed by the server: \(closing.code.rawValue)\(reason.isEmpty ? "" : " \(reason)")")
        }
        if let error {
            let failure = ToolFailure(wrapping: error)
            Console.report(url: url, failure: failure)
            throw ExitCode(failure.exit.rawValue)
        }
    }

    /// Prints every message until receiving fails (the connection ended).
    private static func printMessages(of task: URLSessionWebSocketTask, activity: WebSocketActivity) async {
        while true {
            guard let message = try? await task.receive() else { return }
            activity.touch()
            switch message {
            case .string(let text): Console.out(text)
            case .data(let data): Console.out("base64:" + data.base64EncodedString())
            @unknown default: continue
            }
        }
    }

    /// Sends standard input's lines, each once the one before was sent.
    private static func sendLines(to task: URLSessionWebSocketTask) async {
        while let line = readLine(strippingNewline: true) {
            do {
                try await task.send(.string(line))
            } catch {
                return
            }
        }
    }
}

/// When `courier ws` last received a message.
final class WebSocketActivity: @unchecked Sendable {
    private let lock = NSLock()
    private var last = Date()

    /// A message arrived now.
    func touch() { lock.withLock { last = Date() } }

    /// Waits until nothing arrived for `period` (counted from now at the earliest), or `stop` holds.
    func waitForQuiet(_ period: TimeInterval, unless stop: @Sendable () -> Bool) async {
        touch()
        while !stop(), Date().timeIntervalSince(lock.withLock({ last })) < period {
            try? await Task.sleep(nanoseconds: 20_000_000)
        }
    }
}

/// The `courier ws` session's delegate: trust (`-k`), the close and the completion.
final class WebSocketCommandDelegate: NSObject, URLSessionWebSocketDelegate, @unchecked Sendable {
    private let policy: TransferPolicy
    private let lock = NSLock()
    private var closed: (code: URLSessionWebSocketTask.CloseCode, reason: Data?)?
    private var finished: (any Error)??
    private var waiters: [CheckedContinuation<(any Error)?, Never>] = []
    private var opened = false
    private var openWaiters: [CheckedContinuation<Void, Never>] = []

    init(policy: TransferPolicy) {
        self.policy = policy
    }

    /// The server's close, once it came.
    var closing: (code: URLSessionWebSocketTask.CloseCode, reason: Data?)? { lock.withLock { closed } }

    /// Waits for the task's completion and returns its error.
    func completion() async -> (any Error)? {
        await withCheckedContinuation { continuation in
            let done: (any Error)?? = lock.withLock {
                if finished == nil { waiters.append(continuation) }
                return finished
            }
            if case .some(let error) = done { continuation.resume(returning: error) }
        }
    }

    /// Waits until the connection opened or the task completed.
    func openedOrEnded() async {
        await withCheckedContinuation { continuation in
            let ready: Bool = lock.withLock {
                if opened || finished != nil { return true }
                openWaiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol protocol: String?) {
        let waiting: [CheckedContinuation<Void, Never>] = lock.withLock {
            opened = true
            defer { openWaiters = [] }
            return openWaiters
        }
        for waiter in waiting { waiter.resume() }
    }

    func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask,
                    didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?) {
        lock.withLock { closed = (closeCode, reason) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (waiting, waitingForOpen): ([CheckedContinuation<(any Error)?, Never>], [CheckedContinuation<Void, Never>]) = lock.withLock {
            finished = .some(error)
            defer { waiters = []; openWaiters = [] }
            return (waiters, openWaiters)
        }
        for waiter in waiting { waiter.resume(returning: error) }
        for waiter in waitingForOpen { waiter.resume() }
    }

    func urlSession(_ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        let (disposition, credential) = policy.answer(challenge)
        completionHandler(disposition, credential)
    }
}
