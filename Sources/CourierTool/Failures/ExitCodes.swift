import Foundation

/// The `courier` tool's exit status: one value per kind of failure.
///
/// The numbers are part of the tool's interface (scripts test them), so they never change meaning.
/// `--help` prints ``ToolExit/helpText``.
enum ToolExit: Int32, CaseIterable, Sendable {
    case ok = 0
    case usage = 1
    case badURL = 2
    case notFound = 3
    case permissionDenied = 4
    case connection = 5
    case timedOut = 6
    case cancelled = 7
    case security = 8
    case serverError = 9
    case other = 10

    /// What the status means, as shown in `--help`.
    var meaning: String {
        switch self {
        case .ok: "success (with no URL: every default check ended as expected or was skipped)"
        case .usage: "bad command line: unknown option, malformed -H header, ..."
        case .badURL: "malformed URL or unsupported scheme (badURL, unsupportedURL)"
        case .notFound: "not found (fileDoesNotExist, fileIsDirectory, resourceUnavailable)"
        case .permissionDenied: "permission denied (noPermissionsToReadFile, -o not writable)"
        case .connection: "connection or host error (cannotFindHost, cannotConnectToHost, ...)"
        case .timedOut: "timed out (timedOut, or -m/--max-time ran out)"
        case .cancelled: "cancelled (cancelled, or interrupted by Ctrl-C)"
        case .security: "TLS or authentication failure (secureConnectionFailed, ...)"
        case .serverError: "server response error (HTTP >= 400 with --fail, badServerResponse)"
        case .other: "any other failure (output write error, other URLError codes)"
        }
    }

    /// The exit-status table printed at the end of `--help`.
    static var helpText: String {
        var lines = ["EXIT STATUS:"]
        for code in allCases {
            let number = String(code.rawValue)
            lines.append("  " + number + String(repeating: " ", count: max(1, 4 - number.count)) + code.meaning)
        }
        lines.append("  With several URLs, the status is that of the first URL that failed.")
        return lines.joined(separator: "\n")
    }
}
