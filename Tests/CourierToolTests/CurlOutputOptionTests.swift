import Foundation
import Testing

@testable import CourierTool

/// The curl-compatible output options (`-s`, `-S`, `-w`, `-I`, `-O`, the progress meter,
/// `--version`), each against a server this test process runs on 127.0.0.1.
@Suite("courier output options")
struct CurlOutputOptionTests {
    /// A server answering `/page` with a small text.
    static func pageServer() throws -> FaultServer {
        try FaultServer(routes: ["/page": .respond(.ok(Data("page body\n".utf8), headers: [("Content-Type", "text/plain")]))])
    }

    @Test func silentHidesTheErrorLine() async throws {
        let run = try await CourierBinary.run(["-s", "nosuchscheme://example.invalid/x"])
        #expect(run.status == ToolExit.badURL.rawValue)
        #expect(run.stderr.isEmpty)
    }

    @Test func showErrorKeepsTheErrorLineWhenSilent() async throws {
        let run = try await CourierBinary.run(["-sS", "nosuchscheme://example.invalid/x"])
        #expect(run.status == ToolExit.badURL.rawValue)
        #expect(run.stderr.hasSuffix("(unsupportedURL)\n"))
    }

    @Test func writeOutReportsCodeSizeTimeAndURL() async throws {
        let server = try Self.pageServer()
        defer { server.stop() }
        let url = server.url("/page").absoluteString
        let run = try await CourierBinary.run(["-w", #"%{http_code} %{size_download} %{url_effective}\t%{time_total}\n"#, url])
        #expect(run.status == 0, "\(run.stderr)")
        let report = try #require(run.stdoutText.split(separator: "\n").last.map(String.init))
        let fields = report.split(separator: "\t")
        #expect(fields.first == "200 10 \(url)")
        #expect(fields.last.flatMap { Double($0) }.map { $0 > 0 && $0 < 60 } == true, "time_total: \(report)")
        #expect(run.stdoutText.hasPrefix("page body\n"))
    }

    @Test func writeOutGivesZerosWithoutAResponse() async throws {
        let run = try await CourierBinary.run(["-s", "-w", "%{http_code}:%{size_download}:%{exitcode}", "nosuchscheme://x/"])
        #expect(run.stdoutText == "000:0:2")
    }

    @Test func headSendsHEADAndWritesTheHeadersOnly() async throws {
        let server = try Self.pageServer()
        defer { server.stop() }
        let run = try await CourierBinary.run(["-I", server.url("/page").absoluteString])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(server.requests(for: "/page").map(\.method) == ["HEAD"])
        #expect(run.stdoutText.hasPrefix("HTTP/1.1 200 OK\n"))
        #expect(run.stdoutText.contains("Content-Type: text/plain"))
        #expect(run.stdoutText.hasSuffix("\n\n"))
    }

    @Test func headOnADataURLWritesItsHeadersWithoutTheBody() async throws {
        let run = try await CourierBinary.run(["-I", "data:text/plain,hello"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdoutText == "Content-Type: text/plain\nContent-Length: 5\n\n")
    }

    @Test func remoteNameSavesUnderTheURLsFileNameInTheCurrentDirectory() async throws {
        let server = try Self.pageServer()
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let run = try await CourierBinary.run(["-O", server.url("/page").absoluteString], directory: directory.url)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.isEmpty)
        #expect(try String(contentsOf: directory.file("page"), encoding: .utf8) == "page body\n")
    }

    @Test func remoteNameWithoutAFileNameIsAUsageError() async throws {
        let server = try Self.pageServer()
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let run = try await CourierBinary.run(["-O", server.url("/").absoluteString], directory: directory.url)
        #expect(run.status == ToolExit.usage.rawValue)
        #expect(try directory.contents().isEmpty)
    }

    @Test func verboseShowsTheRealStatusLine() async throws {
        let server = try Self.pageServer()
        defer { server.stop() }
        let run = try await CourierBinary.run(["-v", server.url("/page").absoluteString])
        #expect(run.status == 0)
        #expect(run.stderr.split(separator: "\n").contains("< HTTP/1.1 200 OK"), "\(run.stderr)")
    }

    @Test func versionNamesTheLibraries() async throws {
        let run = try await CourierBinary.run(["--version"], environment: ["COURIER_PLUGIN_PATH": ""])
        #expect(run.status == 0)
        let first = try #require(run.stdoutText.split(separator: "\n").first.map(String.init))
        #expect(first.hasPrefix("courier "))
        for library in ["Courier/", "libcurl/", "OpenSSL/", "libssh2/"] {
            #expect(first.contains(library), "\(library) missing from: \(first)")
        }
        #expect(run.stdoutText.contains("\nProtocols: data file ftp ftps http https sftp"))
        #expect(run.stdoutText.contains("\nPlugins: none loaded"))
    }

    @Test func versionListsThePluginsLoaded() async throws {
        try #require(CourierToolTests.pluginsBuilt, "the example plugins are not built beside courier")
        let products = try #require(CourierBinary.url?.deletingLastPathComponent())
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = DefaultPlugins.install(into: directory.url.appendingPathComponent("plugins", isDirectory: true), products: products)
        let run = try await CourierBinary.run(["--plugins", directory.file("plugins").path, "--version"],
                                              environment: ["COURIER_PLUGIN_PATH": ""])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdoutText.contains("Plugins: ") && run.stdoutText.contains("(gopher)") && run.stdoutText.contains("(zip)"),
                "\(run.stdoutText)")
    }

    @Test func helpPluginsPrintsThePluginsHelp() async throws {
        let run = try await CourierBinary.run(["help", "plugins"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdoutText.contains("courier plugins [<dir> ...]"))
    }

    // MARK: the progress meter

    /// A server whose `/slow` body takes about 1.5 s: 6 pieces of 64 KiB, 0.25 s apart.
    static func slowServer() throws -> FaultServer {
        let pieces = Array(repeating: Data(repeating: 0x61, count: 64 << 10), count: 6)
        return try FaultServer(routes: ["/slow": .chunked(pieces: pieces, delay: 0.25, headers: [])])
    }

    @Test func progressMeterIsDrawnOnATerminalForALongTransfer() async throws {
        let server = try Self.slowServer()
        defer { server.stop() }
        let binary = try #require(CourierBinary.url)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // script(1) runs courier on a pseudo-terminal: its standard error is a terminal.
        let command = "'\(binary.path)' -o '\(directory.file("out").path)' '\(server.url("/slow").absoluteString)'"
        let run = try await CourierBinary.run(["-qec", command, "/dev/null"], binary: URL(fileURLWithPath: "/usr/bin/script"))
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdoutText.contains("\r"), "no meter line: \(run.stdoutText.debugDescription)")
        #expect(run.stdoutText.contains("1 transfer"), "no meter line: \(run.stdoutText.debugDescription)")
    }

    @Test func progressMeterIsSilencedBySilent() async throws {
        let server = try Self.slowServer()
        defer { server.stop() }
        let binary = try #require(CourierBinary.url)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let command = "'\(binary.path)' -s -o '\(directory.file("out").path)' '\(server.url("/slow").absoluteString)'"
        let run = try await CourierBinary.run(["-qec", command, "/dev/null"], binary: URL(fileURLWithPath: "/usr/bin/script"))
        #expect(run.status == 0)
        #expect(run.stdout.isEmpty, "\(run.stdoutText.debugDescription)")
    }

    @Test func noProgressMeterWhenStandardErrorIsNotATerminal() async throws {
        let server = try Self.slowServer()
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let run = try await CourierBinary.run(["-o", directory.file("out").path, server.url("/slow").absoluteString])
        #expect(run.status == 0)
        #expect(run.stderr.isEmpty)
    }
}
