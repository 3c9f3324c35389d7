import Courier
import Foundation
import Logging

/// `-v/--verbose`: what went over the wire, on standard error, the way `curl -v` shows it.
///
/// The run's session logs at `trace` to ``handler``, which prints the library's wire-trace records
/// (those carrying a ``WireTraceKind``): `> ` for request lines and headers sent (or FTP commands),
/// `< ` for status lines and headers received (or FTP replies), `* ` for libcurl's notes and the
/// SSH connection's (address, TLS, negotiated methods, host key, authentication). Each HTTP request
/// and response head ends with a blank `> ` or `< ` line (``HeaderBlocks``). Body sizes and the
/// library's other records (task lifecycle) are left out, as `curl -v` leaves them. The library has
/// already escaped control bytes and, unless `--trace-secrets`, redacted credentials.
///
/// Schemes that libcurl does not serve (data:, file:, sftp:, plugins) send no request header: for
/// them the tool prints the request and the response as the API sees them (``ResponsePrinter``),
/// redacted the same way.
enum VerboseTrace {
    /// The schemes whose requests and responses libcurl traces.
    static let wireTracedSchemes: Set<String> = ["http", "https", "ftp", "ftps"]

    /// Whether the wire trace shows `url`'s request and response (else the tool prints them).
    static func tracesWire(_ url: URL) -> Bool {
        wireTracedSchemes.contains(url.scheme?.lowercased() ?? "")
    }

    /// The logger of a `-v` run: every trace record goes to ``Handler``.
    static func logger() -> Logger {
        var logger = Logger(label: "courier", factory: { _ in Handler() })
        logger.logLevel = .trace
        return logger
    }

    /// `lines` for `-v` when the wire trace does not show them: control characters escaped and,
    /// unless `secrets`, credential header values and URL passwords redacted.
    static func shown(_ lines: [String], secrets: Bool) -> [String] {
        lines.map { line in
            let escaped = LogText.escaped(line)
            return secrets ? escaped : LogRedaction.userinfo(in: LogRedaction.line(escaped))
        }
    }

    /// The header blocks open in the run's transfers (one logger handler is copied per task, so the
    /// state they share lives here).
    private static let blocks = Locked(HeaderBlocks())

    /// Writes the wire-trace records of the run's session to standard error, with their prefixes.
    struct Handler: LogHandler {
        /// Always `trace`: the run asked to see everything on the wire.
        var logLevel: Logger.Level = .trace
        /// Unused: the records' own metadata says what they are.
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            guard case .string(let name)? = event.metadata?[CourierLogKey.wire], let kind = WireTraceKind(rawValue: name) else { return }
            // The task's logger carries its identifier; records without one share a block.
            let transfer = metadata[CourierLogKey.task].map { "\($0)" } ?? ""
            let lines = VerboseTrace.blocks.withLock { $0.lines(transfer: transfer, kind: kind, message: "\(event.message)") }
            for line in lines { Console.err(line) }
        }
    }
}
