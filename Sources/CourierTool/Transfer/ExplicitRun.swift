import Foundation
import Courier

/// Fetches the URLs named on the command line on one shared `URLSession` (connections, cookies and
/// credentials carry from one URL to the next), one after the other or, with `-Z`, concurrently,
/// each body streamed to standard output or to its file.
struct ExplicitRun: Sendable {
    var urls: [String]
    var settings: RunSettings

    /// Runs every URL; returns the status of the first one (in command-line order) that failed, or
    /// ``ToolExit/ok``.
    func run() async -> ToolExit {
        let destination: OutputDestination
        do {
            destination = try OutputDestination.plan(output: settings.output, urlCount: urls.count)
        } catch {
            if settings.showsErrors { Console.err("courier: \(error.message) (\(error.codeName))") }
            return error.exit
        }
        let targets = Self.targets(for: urls, destination: destination, remoteName: settings.remoteName)
        let session = Fetcher.makeSession(maxTime: settings.options.maxTime, cookies: settings.cookies,
                                          verbose: settings.verbose, traceSecrets: settings.traceSecrets)
        let toStandardOutput = targets.contains { (try? $0.get()) == .standardOutput }
        let meter = ProgressMeter.isWanted(silent: settings.silent, bodiesToStandardOutput: toStandardOutput)
            ? ProgressMeter() : nil
        let policy = TransferPolicy(insecure: settings.insecure, followRedirects: settings.followRedirects,
                                    maxRedirects: settings.maxRedirects)
        let runner = TransferRunner(settings: settings, fetcher: Fetcher(
            session: session, maxTime: settings.options.maxTime, policy: policy, progress: meter))

        let statuses: [ToolExit]
        if settings.parallel {
            statuses = await Self.parallel(urls.count, at: settings.parallelMax) { index in
                await runner.run(urls[index], target: targets[index])
            }
        } else {
            var sequential: [ToolExit] = []
            for (index, text) in urls.enumerated() {
                sequential.append(await runner.run(text, target: targets[index]))
            }
            statuses = sequential
        }
        meter?.close()
        var status = statuses.first { $0 != .ok } ?? .ok
        if let jar = settings.cookieJar {
            do {
                try NetscapeCookieJar.write(session.configuration.httpCookieStorage?.cookies ?? [], to: jar)
            } catch {
                if settings.showsErrors { Console.err("courier: -c \(jar): \(error.message) (\(error.codeName))") }
                if status == .ok { status = error.exit }
            }
        }
        session.finishTasksAndInvalidate()
        return status
    }

    /// Runs `count` jobs, at most `limit` at a time; returns their results in job order.
    static func parallel(_ count: Int, at limit: Int, _ job: @escaping @Sendable (Int) async -> ToolExit) async -> [ToolExit] {
        await withTaskGroup(of: (Int, ToolExit).self) { group in
            var results = [ToolExit](repeating: .ok, count: count)
            var next = 0
            while next < min(limit, count) {
                let index = next
                group.addTask { (index, await job(index)) }
                next += 1
            }
            while let (index, status) = await group.next() {
                results[index] = status
                if next < count {
                    let index = next
                    group.addTask { (index, await job(index)) }
                    next += 1
                }
            }
            return results
        }
    }

    /// Where each URL's body goes: standard output, the `-o` file, a file in the `-o` directory, or
    /// (`-O`) its remote name in the current directory. Names are given in command-line order, so a
    /// parallel run saves under the same names as a sequential one.
    static func targets(for urls: [String], destination: OutputDestination, remoteName: Bool)
        -> [Result<OutputTarget, ToolFailure>]
    {
        var usedNames = Set<String>()
        return urls.enumerated().map { index, text -> Result<OutputTarget, ToolFailure> in
            Result { () throws(ToolFailure) -> OutputTarget in
                if remoteName { return .file(try remoteFileName(for: try parse(text))) }
                switch destination {
                case .standardOutput:
                    return .standardOutput
                case .file(let path):
                    return .file(path)
                case .directory(let directory):
                    let name = OutputDestination.fileName(for: try parse(text), position: index + 1, used: usedNames)
                    usedNames.insert(name)
                    return .file(URL(fileURLWithPath: directory).appendingPathComponent(name).path)
                }
            }
        }
    }

    /// `-O`: the URL's last path component, decoded, as a file name in the current directory.
    static func remoteFileName(for url: URL) throws(ToolFailure) -> String {
        let name = url.lastPathComponent
        guard !name.isEmpty, name != "/", name != ".", name != "..", !name.contains("/"),
              url.scheme?.lowercased() != "data" else {
            throw ToolFailure(.cannotCreateFile, "-O: the URL has no file name to save under", url: url, exit: .usage)
        }
        return name
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
}
