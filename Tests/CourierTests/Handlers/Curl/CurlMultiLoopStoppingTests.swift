import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import Courier

/// A loop that is stopping refuses commands, and calls the refused command's client back on
/// another thread, never within the client's own call: a client submits `watch` and `unwatch`
/// with its own lock held, and its callbacks take that lock again (Concurrency.md §3.3 (5)).
@Suite("libcurl loop stopping")
struct CurlMultiLoopStoppingTests {
    /// A socket client that records whether the loop called it back while it was inside its own
    /// call to the loop (what used to deadlock `WebSocketTransport`, whose lock is not recursive).
    private final class ReentryProbe: CurlLoopSocketClient, @unchecked Sendable {
        struct State {
            /// The thread inside the probe's call to the loop, while it is there.
            var submitting: pthread_t?
            /// Each callback: whether it came within the probe's call to the loop (on its thread,
            /// during the call).
            var callbacks: [Bool] = []
        }
        let state = Locked(State())

        func serviceSocket(on loop: CurlMultiLoop, readable: Bool, writable: Bool) {}

        func loopDidStop() { calledBack() }

        /// Records one callback.
        func calledBack() {
            let thread = pthread_self()
            state.withLock { $0.callbacks.append($0.submitting.map { pthread_equal($0, thread) != 0 } ?? false) }
        }

        /// Calls the loop as a client does under its lock: with `submitting` set.
        func submit(_ call: () -> Void) {
            let thread = pthread_self()
            state.withLock { $0.submitting = thread }
            call()
            state.withLock { $0.submitting = nil }
        }
    }

    /// The commands a client submits that call it back when they are refused.
    enum ClientCommand: String, CaseIterable, CustomTestStringConvertible {
        case watch, unwatch, service
        var testDescription: String { rawValue }
    }

    @Test("a command refused by a stopping loop calls its client back later, not within the call",
          arguments: ClientCommand.allCases)
    func refusedCommandCallsBackLater(_ command: ClientCommand) async throws {
        let loop = try #require(CurlMultiLoop(maximumConnectionsPerHost: 1))
        loop.shutDown()
        let probe = ReentryProbe()
        probe.submit {
            switch command {
            case .watch: loop.watch(-1, for: probe, readable: true, writable: false)
            case .unwatch: loop.unwatch(-1) { probe.calledBack() }
            case .service: loop.service(probe)
            }
        }
        let calledBack = await waitUntil { !probe.state.current.callbacks.isEmpty }
        #expect(calledBack && probe.state.current.callbacks == [false])
    }
}
