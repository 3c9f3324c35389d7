import Foundation
import Testing
@testable import Courier

/// The `didWriteData` throttle on its own.
@Suite("Download progress report throttle")
struct WriteReportThrottleTests {
    static let interval = WriteReportThrottle.reportInterval

    @Test func theFirstWriteIsReportedAndLaterOnesWaitForTheQueuedReport() {
        var throttle = WriteReportThrottle()
        guard case .now = throttle.wrote(10, now: Self.interval) else { Issue.record("first write reports"); return }
        guard case .none = throttle.wrote(20, now: Self.interval + 1) else { Issue.record("one report queued at a time"); return }
        let report = throttle.take()
        #expect(report.written == 30)
        #expect(report.total == 30)
    }

    @Test func smallWritesSoonAfterAReportAreDeferredOnce() {
        var throttle = WriteReportThrottle()
        _ = throttle.wrote(10, now: Self.interval)
        _ = throttle.take()
        guard case .later = throttle.wrote(5, now: Self.interval + 1) else { Issue.record("deferred"); return }
        guard case .none = throttle.wrote(5, now: Self.interval + 2) else { Issue.record("deferred once"); return }
        check(throttle.deferredCheck(now: 2 * Self.interval + 2))
        check(throttle.take().written == 10)
        check(!throttle.deferredCheck(now: 3 * Self.interval), "nothing left to report")
    }

    @Test func aMebibyteIsReportedWithoutWaitingForTheInterval() {
        var throttle = WriteReportThrottle()
        _ = throttle.wrote(1, now: Self.interval)
        _ = throttle.take()
        guard case .now = throttle.wrote(WriteReportThrottle.reportBytes, now: Self.interval + 1) else {
            Issue.record("a full mebibyte reports at once"); return
        }
    }

    @Test func theTotalCountsOnFromARestart() {
        var throttle = WriteReportThrottle()
        throttle.restart(at: 100)
        _ = throttle.wrote(10, now: Self.interval)
        check(throttle.take().total == 110)
    }
}
