import Foundation
import Courier

/// Where one URL's body goes.
enum OutputTarget: Sendable, Equatable {
    case standardOutput
    case file(String)
}

/// Fetches one command-line URL on the run's session: builds the request, picks the sink, retries
/// transient failures, reports the failure and writes the `-w` line.
struct TransferRunner: Sendable {
    let settings: RunSettings
    let fetcher: Fetcher

    /// The schemes whose login `-u`/`-n` puts into the URL (they log in before any challenge).
    static let loginInURLSchemes: Set<String> = ["ftp", "ftps", "sftp"]

    /// Fetches `text` into `target`; returns its exit status.
    func run(_ text: String, target: Result<OutputTarget, ToolFailure>) async -> ToolExit {
        let url: URL
        let output: OutputTarget
        do {
            url = try prepareURL(try ExplicitRun.parse(text))
            output = try target.get()
        } catch {
            return report(text, failure: error)
        }
        let login = settings.login(for: url)
        var policy = fetcher.policy
        policy.login = login
        policy.loginHost = url.host
        var fetcher = self.fetcher
        fetcher.policy = policy
        let requestURL = Self.embedding(login, in: url)

        var retries = 0
        let firstStart = ContinuousClock.now
        while true {
            let started = ContinuousClock.now
            let attempt = await attempt(requestURL, output: output, fetcher: fetcher, retriesLeft: retries < settings.retry.attempts)
            let seconds = Self.seconds(ContinuousClock.now - started)
            if let failure = attempt.outcome.failure, retries < settings.retry.attempts,
               shouldRetry(attempt, output: output, elapsed: Self.seconds(ContinuousClock.now - firstStart))
            {
                retries += 1
                let delay = settings.retry.delay(beforeRetry: retries, retryAfter: attempt.outcome.retryAfter ?? nil)
                if settings.showsErrors {
                    let left = settings.retry.attempts - retries
                    Console.err("courier: \(text): \(failure.message); retrying in \(Fetcher.format(seconds: delay)), "
                        + "\(left) \(left == 1 ? "retry" : "retries") left after this one")
                }
                try? await Task.sleep(for: .milliseconds(Int64(delay * 1000)))
                if !Task.isCancelled { continue }
            }
            if settings.verbose {
                Console.err("* \(attempt.outcome.bytes) bytes in \(Int64(seconds * 1000)) ms")
            }
            let status = attempt.outcome.failure.map { report(text, failure: $0) } ?? .ok
            if let writeOut = settings.writeOut {
                let line = writeOut.render(Self.report(text: text, url: requestURL, output: output,
                                                       outcome: attempt.outcome, seconds: seconds, status: status))
                try? Console.writeOut(Data(line.utf8))
            }
            return status
        }
    }

    /// What one try produced.
    private struct Attempt {
        var outcome: FetchOutcome
    }

    /// One try: a fresh sink, the request (with `Range` when resuming), the fetch, then the sink
    /// finished or dropped.
    private func attempt(_ url: URL, output: OutputTarget, fetcher: Fetcher, retriesLeft: Bool) async -> Attempt {
        var request = settings.options.makeRequest(for: url)
        var offset: Int64 = 0
        if let start = settings.resume, case .file(let path) = output {
            offset = ResumePlan.offset(for: start, path: path)
            if offset > 0 {
                guard ResumePlan.resumesWithRange(url) else {
                    return Attempt(outcome: FetchOutcome(failure: ToolFailure(
                        .unsupportedURL, "-C: cannot resume \(url.scheme ?? "this") URLs at an offset (only http, https, ftp, ftps and sftp)",
                        url: url, exit: .badURL)))
                }
                request.setValue("bytes=\(offset)-", forHTTPHeaderField: "Range")
            }
        }
        let sink: any OutputSink
        do {
            sink = try makeSink(output, offset: offset)
        } catch {
            return Attempt(outcome: FetchOutcome(failure: ToolFailure(wrapping: error)))
        }
        if settings.verbose, !VerboseTrace.tracesWire(url) {
            ResponsePrinter.trace(VerboseTrace.shown(ResponsePrinter.requestLines(for: request), secrets: settings.traceSecrets), prefix: "> ")
        }
        let outcome = await fetcher.fetch(request, uploadFile: settings.options.bodyFile, into: sink) { [self, offset] response in
            check(response, sink: sink, url: url, offset: offset, retriesLeft: retriesLeft)
        }
        var result = Attempt(outcome: outcome)
        if outcome.failure == nil {
            do {
                try sink.finish()
            } catch {
                result.outcome.failure = ToolFailure(wrapping: error)
            }
        } else {
            sink.abort()
        }
        return result
    }

    /// Runs when the response arrives: `-v` trace, resume, retry and `--fail` checks, then the `-i`
    /// headers into the output.
    private func check(_ response: URLResponse, sink: any OutputSink, url: URL, offset: Int64,
                       retriesLeft: Bool) -> ResponseDecision
    {
        if settings.verbose, !VerboseTrace.tracesWire(url) {
            ResponsePrinter.trace(VerboseTrace.shown(ResponsePrinter.headerLines(for: response), secrets: settings.traceSecrets), prefix: "< ")
        }
        let http = response as? HTTPURLResponse
        if retriesLeft, let http, RetryPolicy.transientStatuses.contains(http.statusCode) {
            return .retry(after: RetryPolicy.retryAfter(of: response))
        }
        let resumed = ResumePlan.decision(for: response, offset: offset)
        if case .proceed = resumed {} else { return resumed }
        if settings.failOnHTTPError, let http, http.statusCode >= 400 {
            let phrase = HTTPReasonPhrase.phrase(for: http.statusCode).map { " (\($0))" } ?? ""
            return .fail(ToolFailure(.badServerResponse, "server returned HTTP \(http.statusCode)\(phrase)",
                                     url: url, exit: .serverError))
        }
        if settings.include || settings.options.headOnly {
            do {
                try sink.write(ResponsePrinter.includeBlock(for: response))
            } catch {
                return .fail(ToolFailure(wrapping: error))
            }
        }
        // HEAD has no body; other schemes have no HEAD, so their body is skipped.
        return settings.options.headOnly && http == nil ? .skipBody : .proceed
    }

    /// Whether a failed try is tried again: a transient failure or status, time left, and nothing
    /// written to standard output that a new try would repeat.
    private func shouldRetry(_ attempt: Attempt, output: OutputTarget, elapsed: Double) -> Bool {
        guard let failure = attempt.outcome.failure, failure.error.code != .cancelled else { return false }
        if let maxTime = settings.retry.maxTime, elapsed >= maxTime { return false }
        if output == .standardOutput, attempt.outcome.bytes > 0 { return false }
        return attempt.outcome.retryAfter != nil || RetryPolicy.isTransient(failure.error.code)
    }

    /// The URL `-T` uploads to: a URL ending in `/` gets the file's name, as curl does.
    private func prepareURL(_ url: URL) throws(ToolFailure) -> URL {
        guard let file = settings.options.bodyFile, settings.options.isUpload,
              var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              components.percentEncodedPath.isEmpty || components.percentEncodedPath.hasSuffix("/") else { return url }
        let name = file.lastPathComponent.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? file.lastPathComponent
        components.percentEncodedPath = (components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath) + name
        guard let joined = components.url else {
            throw ToolFailure(.badURL, "cannot add the file name \(file.lastPathComponent) to the URL", url: url)
        }
        return joined
    }

    /// `url` with `login` as its user and password, for the schemes that log in before any challenge
    /// (ftp, ftps, sftp) and only when `url` has no user of its own.
    static func embedding(_ login: Login?, in url: URL) -> URL {
        guard let login, url.user == nil, loginInURLSchemes.contains(url.scheme?.lowercased() ?? ""),
              var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=")
        components.percentEncodedUser = login.user.addingPercentEncoding(withAllowedCharacters: allowed)
        components.percentEncodedPassword = login.password.addingPercentEncoding(withAllowedCharacters: allowed)
        return components.url ?? url
    }

    private func makeSink(_ output: OutputTarget, offset: Int64) throws -> any OutputSink {
        switch output {
        case .standardOutput:
            return StandardOutputSink()
        case .file(let path):
            // A device or a pipe (`-o /dev/null`) is written through: never renamed over, never cut.
            if InPlaceFileSink.isSpecialFile(path) { return try InPlaceFileSink(special: path) }
            return settings.resume != nil ? try InPlaceFileSink(resuming: path, at: offset) : try AtomicFileSink(path: path)
        }
    }

    /// Reports `failure` (unless silenced) and returns its exit status.
    private func report(_ text: String, failure: ToolFailure) -> ToolExit {
        if settings.showsErrors { Console.report(url: text, failure: failure) }
        return failure.exit
    }

    /// The `-w` values of a finished transfer.
    static func report(text: String, url: URL, output: OutputTarget, outcome: FetchOutcome, seconds: Double,
                       status: ToolExit) -> TransferReport
    {
        var report = TransferReport(url: text, effectiveURL: outcome.response?.url?.absoluteString ?? url.absoluteString)
        let http = outcome.response as? HTTPURLResponse
        report.httpCode = http?.statusCode ?? 0
        report.sizeDownload = outcome.bytes
        report.sizeUpload = outcome.bytesSent
        report.timeTotal = seconds
        report.contentType = http?.value(forHTTPHeaderField: "Content-Type") ?? outcome.response?.mimeType
        report.redirects = outcome.redirects
        report.exitCode = status.rawValue
        report.errorMessage = outcome.failure?.message ?? ""
        report.httpVersion = http.flatMap(ResponsePrinter.version(of:)) ?? ""
        if case .file(let path) = output { report.fileName = path }
        return report
    }

    /// `duration` in seconds.
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
