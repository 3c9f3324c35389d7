import Foundation
import Logging

/// Courier's logging defaults and the metadata keys its records carry
/// (`Documentation/Observability.md`).
///
/// Every session logs to the `Logger` of its configuration (``URLSessionConfiguration/logger``).
/// When the app sets none, that is ``environmentLogger``: silent unless the process's `COURIER_LOG`
/// names a level, and then writing that level and above to standard error. Courier never calls
/// `LoggingSystem.bootstrap`: that choice belongs to the app.
package enum CourierLogging {
    /// The label of Courier's loggers.
    package static let label = "courier"

    /// The environment variable that turns the default logger on: `trace`, `debug`, `info`,
    /// `notice`, `warning`, `error` or `critical`.
    package static let environmentVariable = "COURIER_LOG"

    /// A logger that emits nothing (its level is `critical`, and its handler drops even that).
    package static let disabled = Logger(label: label, factory: { _ in SwiftLogNoOpLogHandler() })

    /// The logger sessions use unless their configuration names another: the level `COURIER_LOG`
    /// had when it was first asked for, on standard error; ``disabled`` when the variable is unset
    /// or names no level.
    package static let environmentLogger: Logger = logger(forEnvironmentValue: ProcessInfo.processInfo.environment[environmentVariable])

    /// The logger a `COURIER_LOG` value asks for: standard error at that level (case-insensitive,
    /// `warn` accepted for `warning`), or ``disabled`` for `nil`, an empty string or anything else.
    package static func logger(forEnvironmentValue value: String?) -> Logger {
        guard let level = level(named: value) else { return disabled }
        var logger = Logger(label: label, factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = level
        return logger
    }

    /// The level a `COURIER_LOG` value names, or `nil`.
    package static func level(named value: String?) -> Logger.Level? {
        guard let value = value?.trimmingCharacters(in: .whitespaces).lowercased(), !value.isEmpty else { return nil }
        return value == "warn" ? .warning : Logger.Level(rawValue: value)
    }

    /// Whether `logger` emits records at `level` (its level is `level` or lower).
    @inline(__always)
    package static func emits(_ level: Logger.Level, _ logger: Logger) -> Bool {
        logger.logLevel <= level
    }
}

/// The metadata keys of Courier's log records.
package enum CourierLogKey {
    /// The task's identifier within its session (`taskIdentifier`).
    package static let task = "courier.task"
    /// The URL, its password redacted (``LogRedaction/url(_:)``).
    package static let url = "courier.url"
    /// The kind of task: `data`, `upload` or `download`.
    package static let kind = "courier.kind"
    /// How a task ended: `success`, `cancelled` or `failed`.
    package static let outcome = "courier.outcome"
    /// Why a task failed: the `URLError` code number and its description.
    package static let error = "courier.error"
    /// The HTTP status code of the response a task completed with.
    package static let status = "courier.status"
    /// The body bytes a task received.
    package static let bytes = "courier.bytes"
    /// What a wire-trace record shows (``WireTraceKind``); absent on other records.
    package static let wire = "courier.wire"
}
