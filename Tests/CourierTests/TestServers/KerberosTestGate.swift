import Foundation

/// Lets one ``KerberosTestRealm/withClient(ticket:_:)`` scope run at a time (an async mutex).
final class KerberosTestGate: Sendable {
    private let state = Locked<(busy: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    /// Waits until no other scope runs, then marks one running.
    func enter() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now: Bool = state.withLock { state in
                guard state.busy else {
                    state.busy = true
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Ends the running scope and lets the next waiting one in.
    func leave() {
        let next: CheckedContinuation<Void, Never>? = state.withLock { state in
            guard !state.waiting.isEmpty else {
                state.busy = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
