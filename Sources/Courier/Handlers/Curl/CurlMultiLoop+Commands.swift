internal import CCurl
import Foundation

// The commands other threads queue for the loop thread, and how a stopping loop ends the ones it
// can no longer run.
extension CurlMultiLoop {
    /// What `submit` queues for the loop thread: applied by `drive` (drive lock held), or ended by
    /// ``abandon(_:)`` once the loop stops.
    enum Command {
        case add(CurlTransfer)
        case remove(CurlTransfer)
        case unpause(CurlTransfer)
        case nudge
        /// Watch a socket Courier reads and writes itself for its client (``CurlLoopSocketClient``),
        /// with this interest (neither: known, but out of the epoll set).
        case watch(Int32, any CurlLoopSocketClient, readable: Bool, writable: Bool)
        /// Forget a client's socket, then run the closure (which may close the socket).
        case unwatch(Int32, then: @Sendable () -> Void)
        /// Run a client's service pass (``CurlLoopSocketClient/serviceSocket(on:readable:writable:)``)
        /// with no readiness: data may wait where epoll cannot see it (a TLS buffer), or the client
        /// has new work.
        case service(any CurlLoopSocketClient)
        /// Take a running upgrade transfer's connection away from libcurl (``handOver(_:completion:)``).
        case handOver(CurlTransfer, @Sendable (Result<HandedOverConnection, URLError>) -> Void)
    }

    /// Where a stopping loop calls clients back for the commands it refused (``abandonRefused(_:)``),
    /// one after another in the order refused.
    static let refusedCallbacks = DispatchQueue(label: "courier.curl.refused")

    /// Ends a command that `submit` refused because the loop is stopping. A client's callback
    /// (`loopDidStop`, an `unwatch` closure) does not run on the submitting thread: a client submits
    /// `watch` and `unwatch` with its own lock held, and its callbacks take that lock again
    /// (``WebSocketTransport``), so running them here would deadlock that thread. They run soon on
    /// ``refusedCallbacks`` instead; the rest is ended here, as `drive` and `cleanUp` end them.
    func abandonRefused(_ command: Command) {
        switch command {
        case .watch(_, let client, _, _), .service(let client):
            Self.refusedCallbacks.async { client.loopDidStop() }
        case .unwatch(_, let then):
            Self.refusedCallbacks.async(execute: then)
        case .add, .remove, .unpause, .nudge, .handOver:
            abandon([command])
        }
    }

    /// Ends commands that can no longer run (the loop stopped): started transfers fail. Runs client
    /// callbacks on this thread: only for `drive` and `cleanUp`, which hold no client's lock.
    func abandon(_ commands: [Command]) {
        for command in commands {
            switch command {
            case .add(let transfer): transfer.finish(result: CURLE_ABORTED_BY_CALLBACK)
            case .remove(let transfer): transfer.release()
            case .unpause, .nudge: break
            case .watch(_, let client, _, _), .service(let client): client.loopDidStop()
            case .unwatch(_, let then): then()
            case .handOver(let transfer, let completion):
                completion(.failure(URLError(.networkConnectionLost, url: transfer.effectiveURL,
                                             description: "The session was invalidated before the connection could be handed over.")))
            }
        }
    }
}
