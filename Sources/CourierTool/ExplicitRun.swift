import Foundation
import Courier

/// Fetches the URLs named on the command line, one after the other, each body streamed to standard
/// output or to its `-o` file.
struct ExplicitRun: Sendable {
    var urls: [String]
    var options: RequestOptions
    var include = false
    var verbose = false
    var failOnHTTPError = false
    var output: String?

    /// Runs every URL; returns the status of the first one that failed, or ``ToolExit/ok``.
    func run() async -> ToolExit {
        let destination: OutputDestination
        do {
            destination = try OutputDestination.plan(output: output, urlCount: urls.count)
        } catch {
            Console.err("courier: \(error.message) (\(error.codeName))")
            return error.exit
        }
        var firstFailure: ToolExit?
        var usedNames = Set<String>()
        for (index, text) in urls.enumerated() {
            let status = await fetch(text, position: index + 1, destination: destination, usedNames: &usedNames)
            if status != .ok, firstFailure == nil { firstFailure = status }
        }
        return firstFailure ?? .ok
    }

    /// Fetches one URL; reports a failure on standard error and returns its status.
    private func fetch(_ text: String, position: Int, destination: OutputDestination,
                       usedNames: inout Set<String>) async -> ToolExit
    {
        let url: URL
        let sink: any OutputSink
        do {
            url = try Self.parse(text)
            sink = try Self.makeSink(for: url, position: position, destination: destination, usedNames: &usedNames)
        } catch {
            Console.report(url: text, failure: error)
            return error.exit
        }

        let request = options.makeRequest(for: url)
        if verbose { ResponsePrinter.trace(ResponsePrinter.requestLines(for: request), prefix: "> ") }
        let started = ContinuousClock.now
        let outcome = await Fetcher(maxTime: options.maxTime).fetch(request, into: sink) { [self] response in
            check(response, sink: sink, url: url)
        }

        var failure = outcome.failure
        if failure == nil {
            do {
                try sink.finish()
            } catch {
                failure = ToolFailure(wrapping: error)
            }
        } else {
            sink.abort()
        }
        if verbose {
            let elapsed = ContinuousClock.now - started
            Console.err("* \(outcome.bytes) bytes in \(DefaultRunner.milliseconds(elapsed)) ms")
        }
        if let failure {
            Console.report(url: text, failure: failure)
            return failure.exit
        }
        return .ok
    }

    /// Runs when the response arrives: `-v` trace, `--fail` check, then `-i` headers into the output.
    private func check(_ response: URLResponse, sink: any OutputSink, url: URL) -> ToolFailure? {
        if verbose { ResponsePrinter.trace(ResponsePrinter.headerLines(for: response), prefix: "< ") }
        if failOnHTTPError, let http = response as? HTTPURLResponse, http.statusCode >= 400 {
            let reason = HTTPURLResponse.localizedString(forStatusCode: http.statusCode)
            return ToolFailure(.badServerResponse, "server returned HTTP \(http.statusCode) (\(reason))",
                               url: url, exit: .serverError)
        }
        if include {
            do {
                try sink.write(ResponsePrinter.includeBlock(for: response))
            } catch {
                return ToolFailure(wrapping: error)
            }
        }
        return nil
    }

    /// Parses a command-line URL. A string that is no URL, or has no scheme, is a `badURL` failure.
    static func parse(_ text: String) throws(ToolFailure) -> URL {
        guard let url = URL(string: text) else {
            throw ToolFailure(.badURL, "not a valid URL")
        }
        guard let scheme = url.scheme, !scheme.isEmpty else {
            throw ToolFailure(.badURL, "URL has no scheme (try http://, file:// or data:)", url: url)
        }
        return url
    }

    private static func makeSink(for url: URL, position: Int, destination: OutputDestination,
                                 usedNames: inout Set<String>) throws(ToolFailure) -> any OutputSink
    {
        let path: String
        switch destination {
        case .standardOutput:
            return StandardOutputSink()
        case .file(let file):
            path = file
        case .directory(let directory):
            let name = OutputDestination.fileName(for: url, position: position, used: usedNames)
            usedNames.insert(name)
            path = URL(fileURLWithPath: directory).appendingPathComponent(name).path
        }
        do {
            return try AtomicFileSink(path: path)
        } catch {
            throw ToolFailure(wrapping: error)
        }
    }
}
