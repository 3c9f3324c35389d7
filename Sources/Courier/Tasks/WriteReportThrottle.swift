import Foundation

/// When a download task tells its delegate `didWriteData`: at most once per ``reportBytes`` written
/// or ``reportInterval``, with at most one report queued at a time, and a deferred report for bytes
/// a throttled write left behind (so they are reported even when no more arrive). Fast downloads
/// thus do not wake the delegate per chunk; one more report goes out before `didFinishDownloadingTo`.
///
/// A pure value: the task keeps it in its `core` under its lock and queues the report steps.
struct WriteReportThrottle {
    /// Bytes written between two reports at most.
    static let reportBytes: Int64 = 1 << 20
    /// Nanoseconds between two reports at most.
    static let reportInterval: UInt64 = 50_000_000

    /// What a write asks of the task.
    enum Decision {
        /// A report is queued or deferred already: nothing to do.
        case none
        /// Queue a report step now.
        case now
        /// Check again after ``reportInterval`` (``deferredCheck(now:)``).
        case later
    }

    /// Bytes written and not yet reported.
    private var unreported: Int64 = 0
    /// The `totalBytesWritten` reported so far: the running sum of reported bytes, from the resume
    /// offset.
    private(set) var reportedTotal: Int64 = 0
    /// A report step is queued and will report ``unreported``.
    private var queued = false
    /// A deferred check is scheduled.
    private var deferred = false
    /// Monotonic nanoseconds of the last report queued.
    private var lastReport: UInt64 = 0

    /// `count` more bytes were written at `now` (monotonic nanoseconds).
    mutating func wrote(_ count: Int64, now: UInt64) -> Decision {
        unreported += count
        if queued { return .none }
        guard unreported >= Self.reportBytes || now &- lastReport >= Self.reportInterval else {
            if deferred { return .none }
            deferred = true
            return .later
        }
        queued = true
        lastReport = now
        return .now
    }

    /// The deferred check runs at `now`: whether to queue a report for bytes still unreported.
    mutating func deferredCheck(now: UInt64) -> Bool {
        deferred = false
        guard unreported > 0, !queued else { return false }
        queued = true
        lastReport = now
        return true
    }

    /// The queued report runs: the bytes it reports (0: none) and the new running total.
    mutating func take() -> (written: Int64, total: Int64) {
        let written = unreported
        unreported = 0
        queued = false
        reportedTotal += written
        return (written, reportedTotal)
    }

    /// Reports count on from `total` (a resumed download's offset, or 0 when the file starts over).
    mutating func restart(at total: Int64) {
        reportedTotal = total
    }
}
