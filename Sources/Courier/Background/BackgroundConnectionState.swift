import Foundation

/// Where a background session's link stands with the transfer agent (``BackgroundSessionLink``):
/// at most one connection attempt runs at a time, and a closed link never connects again.
///
/// - `disconnected` → `connecting`: the first caller that needs the agent makes the attempt.
/// - `connecting` → `connected` or `disconnected`: the attempt ends; callers that came meanwhile
///   waited for it and share its outcome (the agent takes one `hello` per identifier, so a second
///   connection would be refused).
/// - any → `closed`: the session was invalidated. An attempt that ends after that closes its
///   connection, and a reconnection timer that fires after it does nothing.
enum BackgroundConnectionState {
    /// No connection, and none is being made.
    case disconnected
    /// One thread connects and says `hello`; others wait for the attempt's outcome.
    case connecting(BackgroundConnectionAttempt)
    /// Connected, and the agent welcomed the session.
    case connected(BackgroundAgentClient)
    /// The session was invalidated: no connection any more, and none again.
    case closed

    /// The current connection.
    var client: BackgroundAgentClient? {
        if case .connected(let client) = self { return client }
        return nil
    }

    /// Whether the link was closed for good.
    var isClosed: Bool {
        if case .closed = self { return true }
        return false
    }
}

/// One connection attempt of a background session's link: the thread that makes it reports its
/// outcome once, and the threads that needed the agent meanwhile wait for it (bounded).
final class BackgroundConnectionAttempt: Sendable {
    /// The longest a caller waits for another thread's attempt: longer than an attempt takes at
    /// most (starting the agent, then a `hello` and its reply).
    static let waitLimit: TimeInterval = 60

    private let outcome = Locked<Result<BackgroundAgentClient, URLError>?>(nil)
    private let finished = DispatchSemaphore(value: 0)

    /// Reports the attempt's outcome and wakes every waiter.
    func finish(_ result: Result<BackgroundAgentClient, URLError>) {
        outcome.withLock { $0 = result }
        // Each waiter passes the signal on (`wait`), so one signal wakes them all.
        finished.signal()
    }

    /// The attempt's connection, once it is made; its error when it failed; an error when it takes
    /// longer than ``waitLimit``.
    func wait(url: URL?) throws(URLError) -> BackgroundAgentClient {
        guard finished.wait(timeout: .now() + Self.waitLimit) == .success else {
            throw URLError(.backgroundSessionWasDisconnected, url: url,
                           description: "Connecting to the transfer agent took longer than \(Int(Self.waitLimit)) s.")
        }
        finished.signal()
        switch outcome.withLock({ $0 }) {
        case .success(let client)?:
            return client
        case .failure(let error)?:
            throw error
        case nil:
            throw URLError(.backgroundSessionWasDisconnected, url: url, description: "The connection to the transfer agent was lost.")
        }
    }
}
