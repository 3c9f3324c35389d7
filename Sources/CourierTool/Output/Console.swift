import Foundation

/// Unbuffered writes to the process's standard output and standard error.
///
/// Everything the tool prints goes through here (or through a ``StandardOutputSink``), so body bytes and
/// text lines reach the terminal in the order they were produced.
enum Console {
    /// Writes `data` to standard output, as is.
    static func writeOut(_ data: Data) throws {
        try FileHandle.standardOutput.write(contentsOf: data)
    }

    /// Writes one line to standard output.
    static func out(_ line: String) {
        try? writeOut(Data((line + "\n").utf8))
    }

    /// Writes one line to standard error.
    static func err(_ line: String) {
        try? FileHandle.standardError.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Prints the tool's one-line diagnostic for a failed URL:
    /// `courier: <url>: <message> (<URLError code name>)`.
    static func report(url: String, failure: ToolFailure) {
        err("courier: \(url): \(failure.message) (\(failure.codeName))")
    }
}
