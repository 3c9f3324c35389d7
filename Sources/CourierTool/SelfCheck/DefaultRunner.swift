import Foundation
import Courier

/// Runs the embedded default (``DefaultRun/checks``): writes the fixtures, starts the loopback HTTP and
/// gopher servers, loads the plugins built beside `courier`, fetches every URL concurrently, prints
/// one line per URL in list order and a summary line, then stops the servers and removes the fixtures.
enum DefaultRunner {
    /// What one check produced.
    struct Result: Sendable {
        let url: String
        let outcome: FetchOutcome
        let milliseconds: Int64
        /// Nil when the outcome is the expected one; otherwise what differed.
        let mismatch: String?
        /// Why the check did not run (its plugin was not found), or nil.
        var skipped: String? = nil
        /// Whether the URL was fetched (false when something it needs is missing or broken).
        var fetched = true
    }

    /// The width URLs are shortened to in the report.
    static let urlWidth = 60

    /// The most body bytes a check keeps to compare with its expected body.
    static let sampleLimit = 4096

    /// Starts one of the default run's loopback servers and records whether it is ready for the
    /// checks that need it; `nil` (and the reason in `availability`) when it could not start.
    private static func start<Server>(_ name: String, requirement: Requirement,
                                      availability: inout [Requirement: Availability],
                                      log: (String) -> Void, _ make: () throws -> Server) -> Server?
        where Server: LoopbackService {
        do {
            let server = try make()
            availability[requirement] = .ready
            log("loopback \(name) server on 127.0.0.1:\(server.port)")
            return server
        } catch {
            availability[requirement] = .broken("the loopback \(name) server did not start: \(error)")
            return nil
        }
    }

    /// Runs every check; returns ``ToolExit/ok`` only if none ended unexpectedly (skipped checks
    /// are not failures).
    static func run(maxTime: TimeInterval?, verbose: Bool) async -> ToolExit {
        var fixtures: DefaultFixtures
        do {
            fixtures = try DefaultFixtures.create()
        } catch {
            Console.err("courier: default run: cannot create its temporary files: \(error.localizedDescription)")
            return .other
        }
        defer { fixtures.remove() }
        let log: (String) -> Void = { line in if verbose { Console.err("* \(line)") } }

        var availability: [Requirement: Availability] = [:]
        let httpServer = start("HTTP", requirement: .httpServer, availability: &availability, log: log) { try LoopbackServer() }
        fixtures.httpPort = httpServer?.port
        defer { httpServer?.stop() }
        let gopherServer = start("gopher", requirement: .gopherServer, availability: &availability, log: log) { try LoopbackGopherServer() }
        fixtures.gopherPort = gopherServer?.port
        defer { gopherServer?.stop() }
        for (scheme, state) in DefaultPlugins.install(into: fixtures.pluginDirectory, log: log) {
            availability[.plugin(scheme)] = state
            if case .skipped(let reason) = state { log("plugin \(scheme) skipped: \(reason)") }
        }

        let started = ContinuousClock.now
        let checks = DefaultRun.checks
        let limit = maxTime ?? DefaultRun.timeLimit
        let placeholders = fixtures
        let states = availability
        let results = await withTaskGroup(of: (Int, Result).self) { group in
            for (index, check) in checks.enumerated() {
                let url = placeholders.resolve(check.url)
                let blocked = blocker(for: check, in: states)
                group.addTask {
                    switch blocked {
                    case .skipped(let reason)?:
                        return (index, Result(url: url, outcome: FetchOutcome(), milliseconds: 0, mismatch: nil,
                                              skipped: reason, fetched: false))
                    case .broken(let reason)?:
                        return (index, Result(url: url, outcome: FetchOutcome(), milliseconds: 0, mismatch: reason,
                                              fetched: false))
                    case .ready?, nil:
                        return (index, await runCheck(url: url, expect: check.expect, maxTime: limit))
                    }
                }
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
        let skipped = results.filter { $0.skipped != nil }.count
        let expected = results.count - unexpected - skipped
        Console.out("courier: \(results.count) URLs, \(expected) as expected, \(unexpected) unexpected, "
            + "\(skipped) skipped, \(elapsed) ms")
        return unexpected == 0 ? .ok : .other
    }

    /// The first requirement of `check` that is not ready: skipped before broken, as a missing plugin
    /// explains everything else.
    static func blocker(for check: DefaultCheck, in availability: [Requirement: Availability])
        -> Availability?
    {
        let states = check.requirements.map { availability[$0] ?? .broken("\($0) is not available") }
        if let skipped = states.first(where: { if case .skipped = $0 { true } else { false } }) { return skipped }
        return states.first { $0 != .ready }
    }

    /// Fetches one URL into a byte counter (keeping the first ``sampleLimit`` bytes) and compares the
    /// outcome with `expect`. Each check has a session of its own, so that no check sees another's
    /// cookies or credentials (a run of explicit URLs shares one).
    static func runCheck(url: String, expect: Expectation, maxTime: TimeInterval) async -> Result {
        let started = ContinuousClock.now
        let outcome: FetchOutcome
        let sink = CountingSink(keeping: sampleLimit)
        do {
            let parsed = try ExplicitRun.parse(url)
            let session = Fetcher.makeSession(maxTime: maxTime)
            outcome = await Fetcher(session: session, maxTime: maxTime).fetch(URLRequest(url: parsed), into: sink)
            session.finishTasksAndInvalidate()
        } catch {
            outcome = FetchOutcome(failure: error)
        }
        return Result(url: url, outcome: outcome, milliseconds: milliseconds(ContinuousClock.now - started),
                      mismatch: mismatch(outcome, expect, sample: sink.sample))
    }

    /// Nil when `outcome` matches `expect`, else a short note of what differed. `sample` is the start
    /// of the body, for an expected body.
    static func mismatch(_ outcome: FetchOutcome, _ expect: Expectation, sample: Data = Data()) -> String? {
        switch expect {
        case .failure(let code):
            guard let failure = outcome.failure else { return "expected \(URLErrorCatalog.name(of: code)), got success" }
            return failure.error.code == code ? nil
                : "expected \(URLErrorCatalog.name(of: code)), got \(failure.codeName)"
        case .success(let mime, let bytes, let charset, let status, let body):
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
            if let body {
                let expected = Data(body.utf8)
                if outcome.bytes != Int64(expected.count) || sample != expected.prefix(sampleLimit) {
                    notes.append("body \(quoted(sample, bytes: outcome.bytes)) (expected \(quoted(expected, bytes: Int64(expected.count))))")
                }
            }
            return notes.isEmpty ? nil : notes.joined(separator: ", ")
        }
    }

    /// A short, one-line rendering of a body for a mismatch note.
    static func quoted(_ data: Data, bytes: Int64) -> String {
        var text = String(decoding: data.prefix(60), as: UTF8.self)
            .replacingOccurrences(of: "\r", with: "\\r").replacingOccurrences(of: "\n", with: "\\n")
        if bytes > 60 { text += "..." }
        return "\"" + text + "\""
    }

    /// One report line: URL (shortened), status or error, bytes, MIME type, milliseconds, verdict.
    static func line(for result: Result) -> String {
        if !result.fetched {
            let verdict = result.skipped.map { "skipped: \($0)" } ?? "UNEXPECTED: \(result.mismatch ?? "not fetched")"
            return pad(shorten(result.url, to: urlWidth), urlWidth) + "  "
                + pad(result.skipped == nil ? "not fetched" : "skipped", 16) + " "
                + leftPad("-", 10) + "  " + pad("-", 24) + " " + leftPad("-", 6) + " ms  " + verdict
        }
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
