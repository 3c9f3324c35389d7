import Foundation
import Testing

@testable import CourierTool

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
