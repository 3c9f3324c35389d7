import Foundation

/// When the session's timeout monitor (``TaskTimeoutMonitor``) must look at a task again, as the
/// task says after a check.
enum TaskTimeoutCheck: Equatable {
    /// Never, while nothing changes: the task is not loading, or nothing about it is timed.
    case none
    /// At every tick: an idle timeout applies, or the task is suspended or holds its idle clock.
    case everyTick
    /// Not before this monotonic time (nanoseconds): only the resource timeout applies (an open
    /// WebSocket, which has no idle timeout).
    case at(UInt64)
}
