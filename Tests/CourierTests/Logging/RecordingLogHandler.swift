import Foundation
import Logging
@testable import Courier

/// A `LogHandler` that keeps every record it is given, in memory, for tests to read: what a
/// session logs, without any network mock (the loads go to the real test servers).
struct RecordingLogHandler: LogHandler {
    /// One record as the handler received it.
    struct Record: Sendable {
        let level: Logger.Level
        let message: String
        /// The logger's metadata merged with the record's own.
        let metadata: [String: String]

        /// The record's ``WireTraceKind``, when it is a wire-trace record.
        var wire: WireTraceKind? { metadata[CourierLogKey.wire].flatMap(WireTraceKind.init(rawValue:)) }
    }

    /// Where the records go; shared by every copy of the handler.
    final class Store: Sendable {
        private let records = Locked<[Record]>([])
        private let levelReadCount = Locked(0)

        /// Every record so far.
        var all: [Record] { records.current }

        /// How many times the library asked a handler for its level: the whole cost of logging for
        /// a load whose records are all below that level.
        var levelReads: Int { levelReadCount.current }

        fileprivate func countLevelRead() { levelReadCount.withLock { $0 += 1 } }

        fileprivate func append(_ record: Record) { records.withLock { $0.append(record) } }

        /// A logger at `level` writing here.
        func logger(level: Logger.Level) -> Logger {
            var logger = Logger(label: "courier.test", factory: { _ in RecordingLogHandler(store: self) })
            logger.logLevel = level
            return logger
        }

        /// The records whose message is `message`.
        func records(_ message: String) -> [Record] { all.filter { $0.message == message } }

        /// The messages of the wire-trace records of `kind`.
        func wireLines(_ kind: WireTraceKind) -> [String] { all.filter { $0.wire == kind }.map(\.message) }
    }

    let store: Store
    private var level: Logger.Level = .trace

    /// The handler's level; each read is counted (``Store/levelReads``).
    var logLevel: Logger.Level {
        get {
            store.countLevelRead()
            return level
        }
        set { level = newValue }
    }
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        store.append(Record(level: event.level, message: "\(event.message)",
                            metadata: merged.mapValues { "\($0)" }))
    }
}
