import Foundation
import Testing

@testable import CourierTool

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
