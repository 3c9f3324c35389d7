import Foundation

/// Starts a test server once per test process, on first use, for every test that asks at the same
/// time or later; a failed start is remembered, so later tests fail at once with the same message.
///
/// The thread that starts the server stays to wait for its process (when there is one), so the
/// server's parent-death signal (set with setpriv) fires only when the test process ends.
final class SharedServerLaunch<Server: Sendable>: @unchecked Sendable {
    private enum State {
        case idle
        case starting([CheckedContinuation<Server, any Error>])
        case ready(Server)
        case failed(String)
    }

    private let state = Locked<State>(.idle)
    private let name: String
    private let start: @Sendable () throws -> (Server, Process?)

    /// - Parameters:
    ///   - name: what the server is, for messages ("nginx") and the owner thread's name.
    ///   - start: starts the server (blocking, bounded) and returns it with its process, if any.
    init(name: String, start: @escaping @Sendable () throws -> (Server, Process?)) {
        self.name = name
        self.start = start
    }

    /// The server, started now if nobody started it before.
    func server() async throws -> Server {
        try await withCheckedThrowingContinuation { continuation in
            let startNow: Bool = state.withLock { state in
                switch state {
                case .idle:
                    state = .starting([continuation])
                    return true
                case .starting(let waiting):
                    state = .starting(waiting + [continuation])
                    return false
                case .ready(let server):
                    continuation.resume(returning: server)
                    return false
                case .failed(let message):
                    continuation.resume(throwing: FaultServerError(message))
                    return false
                }
            }
            guard startNow else { return }
            let thread = Thread { [self] in
                let outcome: Result<(Server, Process?), any Error> = Result { try start() }
                let failure = "\(name) could not be started"
                let waiting: [CheckedContinuation<Server, any Error>] = state.withLock { state in
                    guard case .starting(let list) = state else { return [] }
                    switch outcome {
                    case .success(let (server, _)): state = .ready(server)
                    case .failure(let error): state = .failed("\(failure): \(error)")
                    }
                    return list
                }
                for continuation in waiting {
                    switch outcome {
                    case .success(let (server, _)): continuation.resume(returning: server)
                    case .failure(let error): continuation.resume(throwing: FaultServerError("\(failure): \(error)"))
                    }
                }
                if case .success(let (_, process?)) = outcome { process.waitUntilExit() }
            }
            thread.name = "\(name)-owner"
            thread.start()
        }
    }
}
