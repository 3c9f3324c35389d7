import Foundation

// Timeouts, checked by the session's monitor: `timeoutIntervalForRequest` is the longest silence
// from the handler while the task lets it produce, `timeoutIntervalForResource` the longest whole load.
extension URLSessionTask {
    /// Whether the task is loading, so the monitor should keep watching it.
    var isLoading: Bool {
        lock.withLock { core.machine.isLoading }
    }

    /// Fails the task with `timedOut` if a timeout has passed at `now` (monotonic nanoseconds), and
    /// says when the monitor must check it again.
    @discardableResult
    func checkTimeouts(now: UInt64) -> TaskTimeoutCheck {
        let (expired, next): ((Int, String)?, TaskTimeoutCheck) = lock.withLock {
            guard core.machine.isLoading else { return (nil, .none) }
            // Suspended (or otherwise not timed now): looked at again at every tick, as it may resume.
            guard let watch = core.machine.timeoutWatch else { return (nil, .everyTick) }
            if watch.idleClockStopped {
                // Courier holds the transfer back (its handler paused for back-pressure, or the
                // delegate deciding about the response): the idle clock stands still meanwhile.
                core.lastActivity = max(core.lastActivity, now)
            }
            if core.requestTimeout > 0, watch.idleTimeoutApplies, now > core.lastActivity, now - core.lastActivity > core.requestTimeout {
                return ((watch.generation, "The request timed out: nothing arrived for \(Self.seconds(core.requestTimeout)) s."), .none)
            }
            if core.resourceTimeout > 0, now > core.loadStarted, now - core.loadStarted > core.resourceTimeout {
                return ((watch.generation, "The resource timed out after \(Self.seconds(core.resourceTimeout)) s."), .none)
            }
            if core.requestTimeout > 0 || watch.idleClockStopped { return (nil, .everyTick) }
            if core.resourceTimeout > 0 { return (nil, .at(core.loadStarted &+ core.resourceTimeout)) }
            return (nil, .none)
        }
        guard let (generation, message) = expired else { return next }
        complete(error: URLError(.timedOut, url: currentRequest?.url, description: message), generation: generation)
        return .none
    }

    private static func seconds(_ nanoseconds: UInt64) -> String {
        String(format: "%.3g", Double(nanoseconds) / 1e9)
    }
}
