import Foundation
import Testing

@testable import CourierTool

// These tests run the built `courier` binary as a subprocess, the way a person or a script uses it.
// `swift build` (and `swift test`, which builds every product first) puts it next to the test bundle;
// COURIER_BINARY overrides the location.

/// What one run of `courier` produced.
struct ToolRun: Sendable {
    let status: Int32
    let stdout: Data
    let stderr: String
    var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
}

enum CourierBinary {
    /// The `courier` executable this test run uses, or nil when it has not been built.
    static let url: URL? = {
        let manager = FileManager.default
        if let override = ProcessInfo.processInfo.environment["COURIER_BINARY"] {
            return manager.isExecutableFile(atPath: override) ? URL(fileURLWithPath: override) : nil
        }
        var directories: [URL] = []
        if let executable = try? manager.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            directories.append(URL(fileURLWithPath: executable).deletingLastPathComponent())
        }
        directories.append(Bundle.main.bundleURL)
        directories.append(Bundle.main.bundleURL.deletingLastPathComponent())
        if let argument = CommandLine.arguments.first {
            directories.append(URL(fileURLWithPath: argument).deletingLastPathComponent())
        }
        // Inside an .xctest bundle directory the products directory is a few levels up.
        var candidates: [URL] = []
        for directory in directories {
            var current = directory.standardizedFileURL
            for _ in 0..<4 {
                candidates.append(current.appendingPathComponent("courier"))
                current = current.deletingLastPathComponent()
            }
        }
        return candidates.first { url in
            var isDirectory: ObjCBool = false
            return manager.fileExists(atPath: url.path, isDirectory: &isDirectory) && !isDirectory.boolValue
                && manager.isExecutableFile(atPath: url.path)
        }
    }()

    /// Runs `courier` (or the executable `binary`) with `arguments` (in `directory`, when given); kills
    /// it and fails the test if it takes longer than `limit`.
    static func run(_ arguments: [String], environment: [String: String] = [:], binary: URL? = nil,
                    directory: URL? = nil, limit: Duration = .seconds(60)) async throws -> ToolRun
    {
        let binary = try #require(binary ?? url, "courier binary not found next to the test bundle: run `swift build` first")
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let outURL = scratch.url.appendingPathComponent("stdout")
        let errURL = scratch.url.appendingPathComponent("stderr")
        try Data().write(to: outURL)
        try Data().write(to: errURL)
        let outHandle = try FileHandle(forWritingTo: outURL)
        let errHandle = try FileHandle(forWritingTo: errURL)

        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = outHandle
        process.standardError = errHandle
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        try process.run()
        try? outHandle.close()
        try? errHandle.close()

        let deadline = ContinuousClock.now + limit
        while process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        if process.isRunning {
            process.terminate()
            let killDeadline = ContinuousClock.now + .seconds(5)
            while process.isRunning, ContinuousClock.now < killDeadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            Issue.record("courier \(arguments.joined(separator: " ")) did not finish within \(limit)")
        }
        process.waitUntilExit()
        return ToolRun(
            status: process.terminationStatus,
            stdout: try Data(contentsOf: outURL),
            stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }
}

/// A fresh temporary directory, removed by `remove()`.
struct TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-tool-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// The names in the directory, sorted.
    func contents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// Compares two bodies without handing large values to `#expect` (whose failure diff is slow on
/// megabytes).
func sameBytes(_ lhs: Data, _ rhs: Data) -> Bool { lhs == rhs }

/// Bytes that are not text, so a lossy conversion would show.
func patternBytes(_ count: Int) -> Data {
    Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 / 251) })
}

@Suite("courier command-line tool")
struct CourierToolTests {
    // MARK: bodies on standard output

    @Test func dataURLBodyGoesToStandardOutput() async throws {
        let run = try await CourierBinary.run(["data:,Hello%2C%20World%21"])
        #expect(run.status == 0)
        #expect(run.stdoutText == "Hello, World!")
        #expect(run.stderr.isEmpty)
    }

    @Test func base64DataURLGivesItsExactBytes() async throws {
        let base64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
        let run = try await CourierBinary.run(["data:image/png;base64," + base64])
        #expect(run.status == 0)
        #expect(run.stdout == Data(base64Encoded: base64))
    }

    @Test func fileURLBodyIsCopiedByteForByte() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let bytes = patternBytes(3 << 20 + 17)
        try bytes.write(to: directory.file("input.bin"))
        let run = try await CourierBinary.run([directory.file("input.bin").absoluteString])
        #expect(run.status == 0)
        #expect(sameBytes(run.stdout, bytes), "stdout has \(run.stdout.count) bytes, the file \(bytes.count)")
    }

    @Test func severalURLsGoToStandardOutputInOrder() async throws {
        let run = try await CourierBinary.run(["data:,one-", "data:,two-", "data:,three"])
        #expect(run.status == 0)
        #expect(run.stdoutText == "one-two-three")
    }

    // MARK: -o

    @Test func outputOptionWritesTheFile() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let bytes = patternBytes(1 << 20)
        try bytes.write(to: directory.file("input.bin"))
        let target = directory.file("copy.bin")
        let run = try await CourierBinary.run(["-o", target.path, directory.file("input.bin").absoluteString])
        #expect(run.status == 0)
        #expect(run.stdout.isEmpty)
        #expect(sameBytes(try Data(contentsOf: target), bytes))
        #expect(try directory.contents() == ["copy.bin", "input.bin"])
    }

    @Test func failedLoadLeavesTheOutputTargetUntouched() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let target = directory.file("keep.txt")
        try Data("previous content".utf8).write(to: target)
        let run = try await CourierBinary.run(["-o", target.path, directory.file("missing.txt").absoluteString])
        #expect(run.status == ToolExit.notFound.rawValue)
        #expect(try String(contentsOf: target, encoding: .utf8) == "previous content")
        #expect(try directory.contents() == ["keep.txt"], "no temporary file may be left behind")

        let fresh = directory.file("fresh.txt")
        let second = try await CourierBinary.run(["-o", fresh.path, "data:text/plain;base64"])
        #expect(second.status == ToolExit.badURL.rawValue)
        #expect(try directory.contents() == ["keep.txt"])
    }

    @Test func outputIntoMissingDirectoryFails() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let run = try await CourierBinary.run(["-o", directory.file("no/such/dir/out.txt").path, "data:,x"])
        #expect(run.status == ToolExit.notFound.rawValue)
        #expect(run.stderr.contains("(cannotCreateFile)"))
    }

    @Test func outputWithSeveralURLsNamesADirectory() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try Data("file body".utf8).write(to: directory.file("page.txt"))
        let target = directory.file("downloads")
        let run = try await CourierBinary.run([
            "-o", target.path, "data:,first", directory.file("page.txt").absoluteString, "data:,third",
        ])
        #expect(run.status == 0)
        let saved = try FileManager.default.contentsOfDirectory(atPath: target.path).sorted()
        #expect(saved == ["data-1", "data-3", "page.txt"])
        #expect(try String(contentsOf: target.appendingPathComponent("data-1"), encoding: .utf8) == "first")
        #expect(try String(contentsOf: target.appendingPathComponent("page.txt"), encoding: .utf8) == "file body")
    }

    // MARK: -i and -v

    @Test func includePrintsHeadersBeforeTheBody() async throws {
        let run = try await CourierBinary.run(["-i", "data:text/plain;charset=utf-8,caf%C3%A9"])
        #expect(run.status == 0)
        #expect(run.stdoutText == "Content-Type: text/plain; charset=utf-8\nContent-Length: 5\n\ncafé")
    }

    @Test func verboseTracesRequestAndResponseOnStandardError() async throws {
        let run = try await CourierBinary.run(["-v", "-H", "X-Trace: on", "data:text/plain,hi"])
        #expect(run.status == 0)
        #expect(run.stdoutText == "hi")
        let lines = run.stderr.split(separator: "\n").map(String.init)
        #expect(lines.contains("> GET data:text/plain,hi"))
        #expect(lines.contains("> X-Trace: on"))
        #expect(lines.contains("< Content-Type: text/plain"))
    }

    // MARK: exit codes and diagnostics

    @Test func malformedDataURLIsBadURL() async throws {
        let run = try await CourierBinary.run(["data:text/plain;base64"])
        #expect(run.status == ToolExit.badURL.rawValue)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.hasPrefix("courier: data:text/plain;base64: "))
        #expect(run.stderr.hasSuffix("(badURL)\n"))
    }

    @Test func urlWithoutSchemeIsBadURL() async throws {
        let run = try await CourierBinary.run(["just-a-word"])
        #expect(run.status == ToolExit.badURL.rawValue)
        #expect(run.stderr.hasSuffix("(badURL)\n"))
    }

    @Test func missingFileIsNotFound() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("absent.txt").absoluteString
        let run = try await CourierBinary.run([url])
        #expect(run.status == ToolExit.notFound.rawValue)
        #expect(run.stderr.hasPrefix("courier: \(url): "))
        #expect(run.stderr.hasSuffix("(fileDoesNotExist)\n"))
    }

    @Test func unknownSchemeIsUnsupportedURL() async throws {
        let run = try await CourierBinary.run(["nosuchscheme://example.invalid/x"])
        #expect(run.status == ToolExit.badURL.rawValue)
        #expect(run.stderr.hasSuffix("(unsupportedURL)\n"))
    }

    @Test func firstFailureDecidesTheStatusAndTheRestStillRun() async throws {
        let run = try await CourierBinary.run(["nosuchscheme://x", "data:,after", "data:text/plain;base64"])
        #expect(run.status == ToolExit.badURL.rawValue)
        #expect(run.stdoutText == "after")
        #expect(run.stderr.split(separator: "\n").count == 2)
    }

    @Test(arguments: [["-H", "no colon here", "data:,x"], ["--no-such-option"], ["-m", "0", "data:,x"], ["-o", "x"]])
    func commandLineMistakesExitWithUsage(arguments: [String]) async throws {
        let run = try await CourierBinary.run(arguments)
        #expect(run.status == ToolExit.usage.rawValue)
        #expect(!run.stderr.isEmpty)
    }

    @Test func helpDocumentsEveryExitStatus() async throws {
        let run = try await CourierBinary.run(["--help"])
        #expect(run.status == 0)
        for code in ToolExit.allCases {
            #expect(run.stdoutText.contains("  \(code.rawValue) "), "exit status \(code.rawValue) missing from --help")
        }
    }

    // MARK: embedded default

    /// The default run's plugin checks, and whether the plugins were built beside the binary.
    static var pluginChecks: [DefaultCheck] {
        DefaultRun.checks.filter { check in check.requirements.contains { if case .plugin = $0 { true } else { false } } }
    }

    static var pluginsBuilt: Bool {
        guard let directory = CourierBinary.url?.deletingLastPathComponent() else { return false }
        return DefaultPlugins.plugins.allSatisfy {
            FileManager.default.fileExists(atPath: directory.appendingPathComponent($0.library).path)
        }
    }

    @Test func embeddedDefaultRunMatchesEveryExpectation() async throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let run = try await CourierBinary.run([], environment: ["TMPDIR": temporary.url.path, "COURIER_PLUGIN_PATH": ""])
        #expect(run.status == 0, "default run output:\n\(run.stdoutText)\(run.stderr)")
        let lines = run.stdoutText.split(separator: "\n").map(String.init)
        #expect(lines.count == DefaultRun.checks.count + 1)
        #expect(lines.last?.contains(" 0 unexpected") == true)
        #expect(!lines.contains { $0.contains("UNEXPECTED") })
        #expect(try temporary.contents().isEmpty, "the default run must remove its temporary directory")

        // Every kind of URL is there and ended as expected: local, loopback HTTP, plugins.
        let checked = lines.filter { $0.hasSuffix("as expected") }
        for prefix in ["data:", "file:///", "http://127.0.0.1:", "http://user:secret@127.0.0.1:", "nosuchscheme:"] {
            #expect(checked.contains { $0.hasPrefix(prefix) }, "no line for \(prefix) URLs:\n\(run.stdoutText)")
        }
        let httpLines = checked.filter { $0.hasPrefix("http://") }
        #expect(httpLines.count == DefaultRun.checks.filter { $0.requirements.contains(.httpServer) }.count)
        #expect(httpLines.contains { $0.contains("/cookies/set") && $0.contains(" 200 ") })
        #expect(httpLines.contains { $0.contains("user:secret@") && $0.contains(" 200 ") })

        // The plugins are built next to the binary by `swift build`, so their checks run.
        try #require(Self.pluginsBuilt, "libCourierGopher.so / libCourierZip.so not built beside courier")
        for prefix in ["zip:///", "gopher://127.0.0.1:"] {
            #expect(checked.contains { $0.hasPrefix(prefix) }, "no line for \(prefix) URLs:\n\(run.stdoutText)")
        }
        #expect(!lines.contains { $0.contains("skipped:") })
        #expect(lines.last?.contains(" 0 skipped") == true)
    }

    @Test func aCopiedBinarySkipsThePluginChecks() async throws {
        let binary = try #require(CourierBinary.url)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let copy = directory.file("courier")
        try FileManager.default.copyItem(at: binary, to: copy)
        let run = try await CourierBinary.run([], environment: [
            "TMPDIR": temporary.url.path, "COURIER_PLUGIN_PATH": "",
        ], binary: copy)
        #expect(run.status == 0, "default run output:\n\(run.stdoutText)\(run.stderr)")
        let lines = run.stdoutText.split(separator: "\n").map(String.init)
        let skipped = lines.filter { $0.contains(" skipped: ") }
        #expect(skipped.count == Self.pluginChecks.count)
        #expect(skipped.allSatisfy { $0.hasPrefix("zip:") || $0.hasPrefix("gopher:") })
        #expect(skipped.contains { $0.hasSuffix("skipped: libCourierZip.so not found beside courier") })
        #expect(lines.last?.contains(" 0 unexpected, \(Self.pluginChecks.count) skipped") == true)
        #expect(lines.contains { $0.hasPrefix("http://127.0.0.1:") && $0.hasSuffix("as expected") })
        #expect(try temporary.contents().isEmpty)
    }

    // MARK: against the loopback server, in this test process

    @Test func fetchesFromTheLoopbackServerWithHeaders() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let base = "http://127.0.0.1:\(server.port)"
        let run = try await CourierBinary.run(["-i", "\(base)/data.json"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdoutText.hasPrefix("HTTP/1.1 200 "))
        #expect(run.stdoutText.contains("Content-Type: application/json"))
        #expect(run.stdoutText.hasSuffix("\n\n" + LoopbackServer.json))

        // -L: as in curl, redirects are followed only when asked.
        let redirected = try await CourierBinary.run(["-L", "\(base)/redirect", "\(base)/cookies/set",
                                                      "http://user:secret@127.0.0.1:\(server.port)/auth"])
        #expect(redirected.status == 0, "\(redirected.stderr)")
        #expect(redirected.stdoutText == LoopbackServer.text
            + LoopbackServer.cookieEcho("\(LoopbackServer.cookieName)=\(LoopbackServer.cookieValue)")
            + LoopbackServer.authorized)

        let large = try await CourierBinary.run(["\(base)/large.bin"])
        #expect(large.status == 0)
        #expect(sameBytes(large.stdout, LoopbackServer.largeBody), "got \(large.stdout.count) bytes")
    }

    @Test func failOnTheLoopbackServersErrors() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let missing = try await CourierBinary.run(["--fail", "http://127.0.0.1:\(server.port)/missing"])
        #expect(missing.status == ToolExit.serverError.rawValue)
        #expect(missing.stdout.isEmpty)
        let unauthorized = try await CourierBinary.run(["--fail", "http://127.0.0.1:\(server.port)/auth"])
        #expect(unauthorized.status == ToolExit.serverError.rawValue)
        #expect(unauthorized.stderr.contains("HTTP 401"))
    }
}

// Unit tests of the tool's pure pieces, through `@testable import CourierTool`.
@Suite("courier internals")
struct CourierToolUnitTests {
    @Test func everyCatalogNameIsUniqueAndNamesItsCode() {
        let names = URLErrorCatalog.entries.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(Set(URLErrorCatalog.entries.map(\.code.rawValue)).count == names.count)
        #expect(URLErrorCatalog.name(of: .badURL) == "badURL")
        #expect(URLErrorCatalog.name(of: .fileDoesNotExist) == "fileDoesNotExist")
        #expect(URLErrorCatalog.code(named: "timedOut") == .timedOut)
    }

    @Test func errorCodesMapToTheirExitStatus() {
        #expect(URLErrorCatalog.exit(for: .badURL) == .badURL)
        #expect(URLErrorCatalog.exit(for: .unsupportedURL) == .badURL)
        #expect(URLErrorCatalog.exit(for: .fileDoesNotExist) == .notFound)
        #expect(URLErrorCatalog.exit(for: .noPermissionsToReadFile) == .permissionDenied)
        #expect(URLErrorCatalog.exit(for: .cannotConnectToHost) == .connection)
        #expect(URLErrorCatalog.exit(for: .timedOut) == .timedOut)
        #expect(URLErrorCatalog.exit(for: .cancelled) == .cancelled)
        #expect(URLErrorCatalog.exit(for: .serverCertificateUntrusted) == .security)
        #expect(URLErrorCatalog.exit(for: .badServerResponse) == .serverError)
        #expect(URLErrorCatalog.exit(for: URLError.Code(rawValue: -123_456) ?? .unknown) == .other)
    }

    @Test func longURLsAreShortenedInTheMiddle() {
        let long = "file:///tmp/" + String(repeating: "a", count: 80) + "/end.txt"
        let short = DefaultRunner.shorten(long, to: 60)
        #expect(short.count == 60)
        #expect(short.hasPrefix("file:///tmp/"))
        #expect(short.hasSuffix("/end.txt"))
        #expect(DefaultRunner.shorten("data:,x", to: 60) == "data:,x")
    }

    @Test func headersParseAsNameColonValue() {
        #expect(RequestOptions.parseHeader("Accept: text/html") == .init(name: "Accept", value: "text/html"))
        #expect(RequestOptions.parseHeader("X-Empty:") == .init(name: "X-Empty", value: ""))
        #expect(RequestOptions.parseHeader("no colon") == nil)
        #expect(RequestOptions.parseHeader(": value") == nil)
    }

    @Test func directoryFileNamesComeFromTheURL() throws {
        let page = try #require(URL(string: "file:///srv/site/page.html"))
        #expect(OutputDestination.fileName(for: page, position: 1, used: []) == "page.html")
        #expect(OutputDestination.fileName(for: page, position: 4, used: ["page.html"]) == "page.html-4")
        let data = try #require(URL(string: "data:,x"))
        #expect(OutputDestination.fileName(for: data, position: 2, used: []) == "data-2")
    }

    @Test func outputFileErrorsMapToTheirExitStatus() {
        #expect(OutputError(operation: .create, path: "x", errno: EACCES).exit == .permissionDenied)
        #expect(OutputError(operation: .rename, path: "x", errno: EROFS).exit == .permissionDenied)
        #expect(OutputError(operation: .create, path: "x", errno: ENOENT).exit == .notFound)
        #expect(OutputError(operation: .write, path: "x", errno: ENOSPC).exit == .other)
        let failure = ToolFailure(wrapping: OutputError(operation: .create, path: "/out", errno: EACCES))
        #expect(failure.codeName == "cannotCreateFile")
        #expect(failure.exit == .permissionDenied)
        #expect(failure.message == "cannot create output file /out: Permission denied")
    }

    @Test func mismatchesAreDescribed() {
        let ok = FetchOutcome(response: nil, bytes: 3, failure: nil)
        #expect(DefaultRunner.mismatch(ok, .success(bytes: 3)) == nil)
        #expect(DefaultRunner.mismatch(ok, .success(bytes: 4)) == "3 bytes (expected 4)")
        #expect(DefaultRunner.mismatch(ok, .failure(.badURL)) == "expected badURL, got success")
        let failed = FetchOutcome(failure: ToolFailure(.fileDoesNotExist, "gone"))
        #expect(DefaultRunner.mismatch(failed, .failure(.fileDoesNotExist)) == nil)
        #expect(DefaultRunner.mismatch(failed, .failure(.badURL)) == "expected badURL, got fileDoesNotExist")
    }

    @Test func theDefaultListHasEveryKindOfCheck() {
        let urls = DefaultRun.checks.map(\.url)
        #expect(urls.filter { $0.hasPrefix("data:") }.count >= 5)
        #expect(urls.filter { $0.hasPrefix("{files}/") }.count >= 4)
        #expect(urls.filter { $0.hasPrefix("http://127.0.0.1:{port}/") }.count >= 6)
        #expect(urls.contains("http://user:secret@127.0.0.1:{port}/auth"))
        #expect(urls.filter { $0.hasPrefix("zip://{files-path}/") }.count >= 2)
        #expect(urls.filter { $0.hasPrefix("gopher://127.0.0.1:{gopher-port}/") }.count >= 2)
        #expect(DefaultRun.checks.contains { if case .failure(.unsupportedURL) = $0.expect { true } else { false } })
        #expect(DefaultRun.checks.contains { if case .failure(.badURL) = $0.expect { true } else { false } })
    }

    @Test func theZipRootCheckExpectsTheArchivesListing() throws {
        let check = try #require(DefaultRun.checks.first { $0.url == "zip://{files-path}/archive.zip!/" })
        guard case .success(let mime, _, let charset, _, let body) = check.expect else {
            Issue.record("the zip root check expects a failure")
            return
        }
        #expect(mime == "application/vnd.courier.directory-listing+jsonl")
        #expect(charset == "utf-8")
        let listing = try #require(body)
        #expect(listing.utf8.count <= DefaultRunner.sampleLimit, "the run compares only the body's start")
        let entries = try listing.split(separator: "\n").map { line in
            try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        #expect(entries.compactMap { $0["name"] as? String } == ["data.json", "docs", "hello.txt"])
        #expect(entries.compactMap { $0["type"] as? String } == ["file", "directory", "file"])
        #expect(entries.allSatisfy { $0["modificationDate"] as? String == "1980-01-01T00:00:00Z" })
    }

    @Test func requirementsComeFromTheURL() {
        #expect(DefaultCheck("http://127.0.0.1:{port}/x", .success()).requirements == [.httpServer])
        #expect(DefaultCheck("gopher://127.0.0.1:{gopher-port}/", .success()).requirements == [.plugin("gopher"), .gopherServer])
        #expect(DefaultCheck("zip://{files-path}/a.zip!/b", .success()).requirements == [.plugin("zip")])
        #expect(DefaultCheck("data:,x", .success()).requirements.isEmpty)
    }

    @Test func aMissingPluginSkipsAndABrokenOneFails() {
        let gopher = DefaultCheck("gopher://127.0.0.1:{gopher-port}/", .success())
        #expect(DefaultRunner.blocker(for: gopher, in: [.plugin("gopher"): .ready, .gopherServer: .ready]) == nil)
        #expect(DefaultRunner.blocker(for: gopher, in: [.plugin("gopher"): .skipped("gone"), .gopherServer: .broken("down")])
            == .skipped("gone"))
        #expect(DefaultRunner.blocker(for: gopher, in: [.plugin("gopher"): .ready, .gopherServer: .broken("down")])
            == .broken("down"))
        let skipped = DefaultRunner.Result(url: "zip:///a.zip!/b", outcome: FetchOutcome(), milliseconds: 0,
                                           mismatch: nil, skipped: "libCourierZip.so not found beside courier",
                                           fetched: false)
        #expect(DefaultRunner.line(for: skipped).hasSuffix("skipped: libCourierZip.so not found beside courier"))
        let broken = DefaultRunner.Result(url: "http://127.0.0.1:{port}/", outcome: FetchOutcome(), milliseconds: 0,
                                          mismatch: "the loopback HTTP server did not start", fetched: false)
        #expect(DefaultRunner.line(for: broken).contains("  not fetched "))
        #expect(DefaultRunner.line(for: broken).hasSuffix("UNEXPECTED: the loopback HTTP server did not start"))
    }

    @Test func expectedBodiesAreCompared() {
        let ok = FetchOutcome(response: nil, bytes: 3, failure: nil)
        #expect(DefaultRunner.mismatch(ok, .success(body: "abc"), sample: Data("abc".utf8)) == nil)
        #expect(DefaultRunner.mismatch(ok, .success(body: "abd"), sample: Data("abc".utf8)) == #"body "abc" (expected "abd")"#)
        #expect(DefaultRunner.mismatch(ok, .success(body: "ab\n"), sample: Data("abc".utf8)) == #"body "abc" (expected "ab\n")"#)
    }

    @Test func theCountingSinkKeepsOnlyTheStart() throws {
        let sink = CountingSink(keeping: 4)
        try sink.write(Data("abc".utf8))
        try sink.write(Data("defg".utf8))
        #expect(sink.bytes == 7)
        #expect(sink.sample == Data("abcd".utf8))
    }

    @Test func placeholdersAreFilledIn() {
        var fixtures = DefaultFixtures(directory: URL(fileURLWithPath: "/tmp/a b!c", isDirectory: true))
        #expect(fixtures.resolve("{files}/x") == "file:///tmp/a%20b!c/x")
        #expect(fixtures.resolve("zip://{files-path}/a.zip!/x") == "zip:///tmp/a%20b%21c/a.zip!/x")
        #expect(fixtures.resolve("{port}") == "{port}", "no server, no port")
        fixtures.httpPort = 8080
        fixtures.gopherPort = 7070
        #expect(fixtures.resolve("http://127.0.0.1:{port}/ gopher://127.0.0.1:{gopher-port}/")
            == "http://127.0.0.1:8080/ gopher://127.0.0.1:7070/")
    }

    @Test func pluginsNotBesideTheBinaryAreSkipped() throws {
        let products = try TemporaryDirectory()
        defer { products.remove() }
        let target = products.url.appendingPathComponent("plugins", isDirectory: true)
        let availability = DefaultPlugins.install(into: target, products: products.url)
        #expect(availability == ["gopher": .skipped("libCourierGopher.so not found beside courier"),
                                 "zip": .skipped("libCourierZip.so not found beside courier")])
        let mode = try FileManager.default.attributesOfItem(atPath: target.path)[.posixPermissions] as? Int
        #expect(mode == 0o700)
    }

    @Test func manifestsAreFoundInThePackage() throws {
        for plugin in DefaultPlugins.plugins {
            let manifest = try #require(DefaultPlugins.manifest(for: plugin, near: URL(fileURLWithPath: "/nonexistent")))
            #expect(manifest.path.hasSuffix("Plugins/\(plugin.folder)/manifest.json"))
            let object = try JSONSerialization.jsonObject(with: Data(contentsOf: manifest)) as? [String: Any]
            #expect(object?["library"] as? String == plugin.library)
            #expect(object?["name"] as? String == plugin.scheme)
        }
    }
}
