import Courier
import Foundation

/// Ctrl-C handling: the first SIGINT stops every running fetch with a `cancelled` failure (so `-o`
/// temporary files are removed and the tool exits with status 7); a second one exits at once.
enum Interrupts {
    private struct State {
        var fetches: [Int: StreamingDelegate] = [:]
        var nextToken = 0
        var interrupted = 0
        var source: (any DispatchSourceSignal)?
    }

    private static let state = Locked(State())

    /// Installs the SIGINT handler. Call once, before any fetch starts.
    static func install() {
        signal(SIGINT, SIG_IGN)
        state.withLock { state in
            guard state.source == nil else { return }
            let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
            source.setEventHandler { interrupt() }
            source.resume()
            state.source = source
        }
    }

    /// Adds a running fetch; returns the token that removes it.
    static func register(_ fetch: StreamingDelegate) -> Int {
        state.withLock { state in
            state.nextToken += 1
            state.fetches[state.nextToken] = fetch
            return state.nextToken
        }
    }

    /// Removes the fetch registered under `token`.
    static func unregister(_ token: Int) {
        state.withLock { _ = $0.fetches.removeValue(forKey: token) }
    }

    private static func interrupt() {
        let (fetches, count) = state.withLock { state in
            state.interrupted += 1
            return (Array(state.fetches.values), state.interrupted)
        }
        if count > 1 { _exit(128 + SIGINT) }
        for fetch in fetches {
            fetch.stop(with: ToolFailure(.cancelled, "interrupted"))
        }
    }
}
