import Foundation
import Courier

/// Runs the embedded default (``DefaultRun/checks``): writes the fixtures, fetches every URL
/// concurrently, prints one line per URL in list order and a summary line, and removes the fixtures.
enum DefaultRunner {
    /// What one check produced.
    struct Result: Sendable {
        let url: String
        let outcome: FetchOutcome
        let milliseconds: Int64
        /// Nil when the outcome is the expected one; otherwise what differed.
        let mismatch: String?
    }

    /// The width URLs are shortened to in the report.
    static let urlWidth = 60

    /// Runs every check; returns ``ToolExit/ok`` only if all ended as expected.
    static func run(maxTime: TimeInterval?, verbose: Bool) async -> ToolExit {
        let fixtures: DefaultFixtures
        do {
            fixtures = try DefaultFixtures.create()
        } catch {
            Console.err("courier: default run: cannot create its temporary files: \(error.localizedDescription)")
            return .other
        }
        defer { fixtures.remove() }

        let started = ContinuousClock.now
        let checks = DefaultRun.checks
        let fetcher = Fetcher(maxTime: maxTime)
        let results = await withTaskGroup(of: (Int, Result).self) { group in
            for (index, check) in checks.enumerated() {
                let url = fixtures.resolve(check.url)
                group.addTask { (index, await runCheck(url: url, expect: check.expect, fetcher: fetcher)) }
            }
            var results = [Result?](repeating: nil, count: checks.count)
            for await (index, result) in group { results[index] = result }
            return results.compactMap { $0 }
        }
        let elapsed = milliseconds(ContinuousClock.now - started)

        for result in results {
            Console.out(line(for: result))
            if verbose, let failure = result.outcome.failure {
                Console.err("  \(result.url): \(failure.message) (\(failure.codeName))")
            }
        }
        let unexpected = results.filter { $0.mismatch != nil }.count
        Console.out("courier: \(results.count) URLs, \(results.count - unexpected) as expected, "
            + "\(unexpected) unexpected, \(elapsed) ms")
        return unexpected == 0 ? .ok : .other
    }

    /// Fetches one URL into a byte counter and compares the outcome with `expect`.
    static func runCheck(url: String, expect: Expectation, fetcher: Fetcher) async -> Result {
        let started = ContinuousClock.now
        let outcome: FetchOutcome
        do {
            let parsed = try ExplicitRun.parse(url)
            outcome = await fetcher.fetch(URLRequest(url: parsed), into: CountingSink())
        } catch {
            outcome = FetchOutcome(failure: error)
        }
        return Result(url: url, outcome: outcome, milliseconds: milliseconds(ContinuousClock.now - started),
                      mismatch: mismatch(outcome, expect))
    }

    /// Nil when `outcome` matches `expect`, else a short note of what differed.
    static func mismatch(_ outcome: FetchOutcome, _ expect: Expectation) -> String? {
        switch expect {
        case .failure(let code):
            guard let failure = outcome.failure else { return "expected \(URLErrorCatalog.name(of: code)), got success" }
            return failure.error.code == code ? nil
                : "expected \(URLErrorCatalog.name(of: code)), got \(failure.codeName)"
        case .success(let mime, let bytes, let charset, let status):
            if let failure = outcome.failure { return "expected success, got \(failure.codeName)" }
            var notes: [String] = []
            let response = outcome.response
            if let mime, response?.mimeType != mime {
                notes.append("MIME \(response?.mimeType ?? "none") (expected \(mime))")
            }
            if let bytes, outcome.bytes != bytes { notes.append("\(outcome.bytes) bytes (expected \(bytes))") }
            if let charset, response?.textEncodingName?.lowercased() != charset.lowercased() {
                notes.append("charset \(response?.textEncodingName ?? "none") (expected \(charset))")
            }
            if let status {
                let actual = (response as? HTTPURLResponse)?.statusCode
                if actual != status { notes.append("status \(actual.map(String.init) ?? "none") (expected \(status))") }
            }
            return notes.isEmpty ? nil : notes.joined(separator: ", ")
        }
    }

    /// One report line: URL (shortened), status or error, bytes, MIME type, milliseconds, verdict.
    static func line(for result: Result) -> String {
        let status: String
        if let failure = result.outcome.failure {
            status = failure.codeName
        } else if let http = result.outcome.response as? HTTPURLResponse {
            status = String(http.statusCode)
        } else {
            status = "OK"
        }
        let mime = result.outcome.response?.mimeType ?? "-"
        let verdict = result.mismatch.map { "UNEXPECTED: \($0)" } ?? "as expected"
        return pad(shorten(result.url, to: urlWidth), urlWidth) + "  " + pad(status, 16) + " "
            + leftPad(String(result.outcome.bytes), 10) + "  " + pad(mime, 24) + " "
            + leftPad(String(result.milliseconds), 6) + " ms  " + verdict
    }

    /// `text` if it fits in `width` characters, else its start and end around `...`.
    static func shorten(_ text: String, to width: Int) -> String {
        guard text.count > width else { return text }
        let head = (width - 3) / 2
        let tail = width - 3 - head
        return String(text.prefix(head)) + "..." + String(text.suffix(tail))
    }

    /// Whole milliseconds in `duration`.
    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    private static func leftPad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }
}
