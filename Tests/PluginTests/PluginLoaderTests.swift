import Foundation
import Testing
@testable import Courier

/// Loading plugin directories: what is accepted, what is refused and why. Each test uses a loader
/// of its own (not the process-wide one) and a directory of its own.
@Suite("Plugin loader")
struct PluginLoaderTests {
    /// A directory holding the gopher and zip plugins with their manifests.
    private func examplePlugins() throws -> PluginDirectory {
        let directory = try PluginDirectory()
        try directory.addLibrary(PluginProducts.gopher)
        try directory.addManifest(PluginProducts.manifest("Gopher"), as: "gopher.json")
        try directory.addLibrary(PluginProducts.zip)
        try directory.addManifest(PluginProducts.manifest("Zip"), as: "zip.json")
        return directory
    }

    private func reasons(_ report: PluginLoadReport) -> [PluginLoadError.Reason] { report.failures.map(\.reason) }

    @Test func loadsTheExamplePluginsFromTheirManifestsWithoutOpeningThem() throws {
        let directory = try examplePlugins()
        defer { directory.remove() }
        let loader = PluginLoader()
        let report = loader.load(directory: directory.url, options: [])
        #expect(report.failures.isEmpty, "\(report.failures)")
        #expect(report.loaded.map(\.name) == ["gopher", "zip"])
        let gopher = try #require(report.loaded.first)
        #expect(gopher.version == "1.0.0")
        #expect(gopher.schemes == [LoadedPlugin.Scheme(name: "gopher", capabilities: [.read, .list])])
        #expect(gopher.libraryURL.lastPathComponent == "libCourierGopher.so")
        #expect(gopher.manifestURL.lastPathComponent == "gopher.json")
        #expect(report.loaded[1].schemes.first?.capabilities == [.read, .list, .resume])
        #expect(loader.serves(scheme: "gopher") && loader.serves(scheme: "ZIP"))
        // Lazy: nothing is opened until a scheme is used.
        #expect(loader.library(forScheme: "gopher")?.isOpen == false)
        #expect(loader.library(forScheme: "zip")?.isOpen == false)
        guard case .success? = loader.open(scheme: "gopher") else {
            Issue.record("gopher did not open")
            return
        }
        #expect(loader.library(forScheme: "gopher")?.isOpen == true)
        #expect(loader.library(forScheme: "zip")?.isOpen == false)
    }

    @Test func openLibrariesNowOpensAndVerifiesEveryLibrary() throws {
        let directory = try examplePlugins()
        defer { directory.remove() }
        let loader = PluginLoader()
        let report = loader.load(directory: directory.url, options: .openLibrariesNow)
        #expect(report.failures.isEmpty, "\(report.failures)")
        #expect(loader.library(forScheme: "gopher")?.isOpen == true)
        #expect(loader.library(forScheme: "zip")?.isOpen == true)
    }

    @Test func loadingTheSameFilesTwiceIsHarmless() throws {
        let directory = try examplePlugins()
        defer { directory.remove() }
        let loader = PluginLoader()
        let first = loader.load(directory: directory.url, options: [])
        let second = loader.load(directory: directory.url, options: .openLibrariesNow)
        #expect(first.failures.isEmpty && second.failures.isEmpty, "\(second.failures)")
        #expect(second.loaded == first.loaded)
        #expect(loader.loaded.count == 2)
        // A second manifest naming the same library is the same plugin, not a duplicate.
        try directory.addManifest(PluginProducts.manifest("Gopher"), as: "gopher-again.json")
        let third = loader.load(directory: directory.url, options: [])
        #expect(third.failures.isEmpty, "\(third.failures)")
        #expect(loader.loaded.count == 2)
    }

    @Test func aFileThatIsNotASharedLibraryIsRefused() throws {
        let directory = try PluginDirectory()
        defer { directory.remove() }
        try directory.writeFile("libfake.so", Data("#!/bin/sh\necho not a library\n".utf8))
        try directory.writeManifest("fake.json", plugin: "fake", library: "libfake.so", schemes: [("fake", ["read"])])
        let report = PluginLoader().load(directory: directory.url, options: [])
        #expect(report.loaded.isEmpty)
        let failure = try #require(report.failures.first)
        #expect(failure.file.lastPathComponent == "libfake.so")
        guard case .notASharedLibrary = failure.reason else {
            Issue.record("expected notASharedLibrary, got \(failure.reason)")
            return
        }
    }

    @Test func aLibraryWithoutTheEntrySymbolIsRefused() throws {
        let directory = try PluginDirectory()
        defer { directory.remove() }
        try directory.addLibrary(PluginProducts.noEntry)
        try directory.writeManifest("noentry.json", plugin: "noentry", library: "libCourierTestPluginNoEntry.so",
                                    schemes: [("courier-noentry-eager", ["read"])])
        // Lazily: accepted from its manifest, refused when first opened.
        let lazy = PluginLoader()
        #expect(lazy.load(directory: directory.url, options: []).failures.isEmpty)
        guard case .failure(let error)? = lazy.open(scheme: "courier-noentry-eager") else {
            Issue.record("the library opened")
            return
        }
        #expect(error.reason == .missingEntrySymbol)
        #expect(error.file.lastPathComponent == "libCourierTestPluginNoEntry.so")
        #expect(!lazy.serves(scheme: "courier-noentry-eager"), "a refused library's schemes are withdrawn")
        #expect(lazy.failures == [error])
        // Eagerly: refused in the report.
        let eager = PluginLoader().load(directory: directory.url, options: .openLibrariesNow)
        #expect(reasons(eager) == [.missingEntrySymbol])
    }

    @Test func unsupportedABIVersionsAreRefused() throws {
        let directory = try PluginDirectory()
        defer { directory.remove() }
        // In the manifest: refused without opening anything.
        try directory.addLibrary(PluginProducts.gopher)
        try directory.writeManifest("gopher.json", plugin: "gopher", abiVersion: 2, library: "libCourierGopher.so",
                                    schemes: [("gopher", ["read", "list"])])
        // In the descriptor: the library says 999 although its manifest says 1.
        try directory.addLibrary(PluginProducts.futureABI)
        try directory.writeManifest("future.json", plugin: "future", library: "libCourierTestPluginFutureABI.so",
                                    schemes: [("courier-future", ["read"])])
        let report = PluginLoader().load(directory: directory.url, options: .openLibrariesNow)
        #expect(report.loaded.isEmpty)
        #expect(Set(reasons(report)) == [
            .unsupportedABIVersion(found: 999, supported: 1...1),
            .unsupportedABIVersion(found: 2, supported: 1...1),
        ])
    }

    @Test(arguments: ["Gopher", "1gopher", "go pher", "", "gopher/x", "gøpher"])
    func invalidSchemeNamesAreRefused(scheme: String) throws {
        let directory = try PluginDirectory()
        defer { directory.remove() }
        try directory.addLibrary(PluginProducts.gopher)
        try directory.writeManifest("gopher.json", plugin: "gopher", library: "libCourierGopher.so",
                                    schemes: [(scheme, ["read"])])
        let report = PluginLoader().load(directory: directory.url, options: [])
        #expect(reasons(report) == [.invalidScheme(scheme)])
    }

    @Test func aSchemeServedByAnotherPluginIsRefused() throws {
        let directory = try PluginDirectory()
        defer { directory.remove() }
        try directory.addLibrary(PluginProducts.gopher)
        try directory.addManifest(PluginProducts.manifest("Gopher"), as: "a-gopher.json")
        try directory.addLibrary(PluginProducts.gopher, as: "libOtherGopher.so")
        try directory.writeManifest("b-other.json", plugin: "other", library: "libOtherGopher.so",
                                    schemes: [("gopher", ["read"])])
        let loader = PluginLoader()
        let report = loader.load(directory: directory.url, options: [])
        #expect(report.loaded.map(\.name) == ["gopher"])
        let failure = try #require(report.failures.first)
        #expect(failure.file.lastPathComponent == "b-other.json")
        guard case .duplicateScheme("gopher", let owner) = failure.reason else {
            Issue.record("expected duplicateScheme, got \(failure.reason)")
            return
        }
        #expect(owner.contains("gopher"))
        #expect(loader.library(forScheme: "gopher")?.manifest.name == "gopher")
    }

    @Test func filesOrDirectoriesWritableByOthersAreRefused() throws {
        // A library writable by its group.
        let directory = try examplePlugins()
        defer { directory.remove() }
        try directory.setMode(0o775, of: directory.file("libCourierGopher.so"))
        // A manifest writable by everyone.
        try directory.setMode(0o666, of: directory.file("zip.json"))
        let report = PluginLoader().load(directory: directory.url, options: [])
        #expect(report.loaded.isEmpty)
        #expect(report.failures.map(\.file.lastPathComponent) == ["libCourierGopher.so", "zip.json"])
        for failure in report.failures {
            guard case .insecurePermissions(let detail) = failure.reason else {
                Issue.record("expected insecurePermissions, got \(failure.reason)")
                continue
            }
            #expect(detail.contains("writable by others"))
        }

        // A directory writable by everyone: nothing in it is read.
        let open = try examplePlugins()
        defer { open.remove() }
        try open.setMode(0o777, of: open.url)
        let refused = PluginLoader().load(directory: open.url, options: [])
        #expect(refused.loaded.isEmpty)
        #expect(refused.failures.map(\.file.path) == [open.url.standardizedFileURL.path])
        guard case .insecurePermissions? = refused.failures.first?.reason else {
            Issue.record("expected insecurePermissions, got \(refused.failures)")
            return
        }
    }

    @Test(.enabled(if: geteuid() == 0, "only root can give a file to another user"))
    func filesOwnedByAnotherUserAreRefused() throws {
        let directory = try examplePlugins()
        defer { directory.remove() }
        let library = directory.file("libCourierZip.so")
        #expect(chown(library.path, 65534, 65534) == 0)
        let report = PluginLoader().load(directory: directory.url, options: [])
        #expect(report.loaded.map(\.name) == ["gopher"])
        guard case .insecurePermissions(let detail)? = report.failures.first?.reason else {
            Issue.record("expected insecurePermissions, got \(report.failures)")
            return
        }
        #expect(detail.contains("belongs to another user"))
        #expect(report.failures.first?.file == library.standardizedFileURL)
    }

    @Test func builtInSchemesNeedTheHostsPermission() throws {
        let directory = try PluginDirectory()
        defer { directory.remove() }
        try directory.addLibrary(PluginProducts.gopher)
        try directory.writeManifest("gopher.json", plugin: "gopher", library: "libCourierGopher.so",
                                    schemes: [("http", ["read"])])
        #expect(reasons(PluginLoader().load(directory: directory.url, options: [])) == [.builtInScheme("http")])
        let allowed = PluginLoader()
        let report = allowed.load(directory: directory.url, options: .allowBuiltInSchemes)
        #expect(report.failures.isEmpty)
        #expect(allowed.serves(scheme: "http"))
        // With the host's permission the plugin comes before the built-in handler — but after
        // classes the app registered.
        var resolver = ProtocolResolver(configured: [], builtIns: BuiltInHandlers.table)
        resolver.plugins = allowed
        let request = URLRequest(url: URL(string: "http://example.invalid/")!)
        #expect(resolver.handlerClass(for: request) == PluginURLProtocol.self)
        let withApp = ProtocolResolver(configured: [ProtocolClassBox(ClaimsEverythingProtocol.self)],
                                       builtIns: BuiltInHandlers.table, plugins: allowed)
        #expect(withApp.handlerClass(for: request) == ClaimsEverythingProtocol.self)
    }

    /// The schemes of Courier's own handlers, as the tests below expect them.
    static let builtInSchemes = ["data", "file", "ftp", "ftps", "http", "https", "sftp", "ws", "wss"]

    /// A plugin claiming any scheme Courier serves itself — `ftps` too — is refused unless the host
    /// grants it, even when the scheme is not the manifest's first.
    @Test(arguments: PluginLoaderTests.builtInSchemes)
    func aBuiltInSchemeIsRefusedUnlessGranted(scheme: String) throws {
        let directory = try PluginDirectory()
        defer { directory.remove() }
        try directory.addLibrary(PluginProducts.gopher)
        try directory.writeManifest("claims.json", plugin: "claims", library: "libCourierGopher.so",
                                    schemes: [("claims-own", ["read"]), (scheme, ["read"])])
        let refusing = PluginLoader()
        #expect(reasons(refusing.load(directory: directory.url, options: [])) == [.builtInScheme(scheme)])
        #expect(!refusing.serves(scheme: scheme))
        #expect(!refusing.serves(scheme: "claims-own"), "a refused plugin serves none of its schemes")
        let granting = PluginLoader()
        #expect(granting.load(directory: directory.url, options: .allowBuiltInSchemes).failures.isEmpty)
        #expect(granting.serves(scheme: scheme))
    }

    /// The reserved list is the table of built-in handlers, not a copy of it that can fall behind.
    @Test func theReservedSchemesAreTheBuiltInHandlersSchemes() {
        #expect(BuiltInHandlers.table.schemes == Self.builtInSchemes)
        #expect(CourierPlugins.builtInSchemes == Set(BuiltInHandlers.table.schemes))
    }

    @Test func aDescriptorThatDisagreesWithItsManifestIsRefused() throws {
        let directory = try PluginDirectory()
        defer { directory.remove() }
        try directory.addLibrary(PluginProducts.gopher)
        try directory.writeManifest("gopher.json", plugin: "gopher", version: "2.0.0", library: "libCourierGopher.so",
                                    schemes: [("gopher", ["read", "list"]), ("gophers", ["read"])])
        let report = PluginLoader().load(directory: directory.url, options: .openLibrariesNow)
        let failure = try #require(report.failures.first)
        guard case .manifestMismatch(let detail) = failure.reason else {
            Issue.record("expected manifestMismatch, got \(failure.reason)")
            return
        }
        #expect(detail.contains("version 1.0.0"))
        #expect(detail.contains("gophers"))
    }

    @Test func malformedManifestsAndMissingLibrariesAreRefused() throws {
        let directory = try PluginDirectory()
        defer { directory.remove() }
        try directory.writeFile("a-broken.json", Data("{ not json".utf8))
        try directory.writeFile("b-incomplete.json", Data(#"{"name": "x", "version": "1"}"#.utf8))
        try directory.writeManifest("c-missing.json", plugin: "missing", library: "libMissing.so", schemes: [("missing", ["read"])])
        try directory.writeManifest("d-escape.json", plugin: "escape", library: "../libCourierGopher.so", schemes: [("escape", ["read"])])
        try directory.writeManifest("e-capability.json", plugin: "cap", library: "libCourierGopher.so", schemes: [("cap", ["fly"])])
        try directory.writeFile("notes.txt", Data("ignored: not a manifest".utf8))
        let report = PluginLoader().load(directory: directory.url, options: [])
        #expect(report.loaded.isEmpty)
        let found = report.failures.map { ($0.file.lastPathComponent, $0.reason) }
        #expect(found.count == 5)
        guard found.count == 5 else { return }
        guard case .invalidManifest = found[0].1, case .invalidManifest(let missingKey) = found[1].1,
              case .missingLibrary("libMissing.so") = found[2].1, case .invalidManifest = found[3].1,
              case .invalidManifest(let capability) = found[4].1 else {
            Issue.record("unexpected reasons: \(found)")
            return
        }
        #expect(missingKey.contains("abiVersion"))
        #expect(capability.contains("unknown capability"))
    }

    @Test func oneBadPluginDoesNotStopTheOthers() throws {
        let directory = try examplePlugins()
        defer { directory.remove() }
        try directory.writeFile("libbroken.so", Data(repeating: 0, count: 64))
        try directory.writeManifest("broken.json", plugin: "broken", library: "libbroken.so", schemes: [("broken", ["read"])])
        try directory.addLibrary(PluginProducts.futureABI)
        try directory.writeManifest("future.json", plugin: "future", library: "libCourierTestPluginFutureABI.so",
                                    schemes: [("courier-future", ["read"])])
        let loader = PluginLoader()
        let report = loader.load(directory: directory.url, options: .openLibrariesNow)
        #expect(report.loaded.map(\.name) == ["gopher", "zip"])
        #expect(report.failures.map(\.file.lastPathComponent) == ["libbroken.so", "libCourierTestPluginFutureABI.so"])
        #expect(loader.failures.count == 2)
        #expect(loader.serves(scheme: "gopher") && !loader.serves(scheme: "broken") && !loader.serves(scheme: "courier-future"))
    }

    @Test func aMissingDirectoryIsReported() {
        let missing = URL(fileURLWithPath: "/nonexistent-courier-plugins-\(UUID().uuidString)")
        let report = PluginLoader().load(directory: missing, options: [])
        #expect(report.loaded.isEmpty)
        guard case .unreadableDirectory? = report.failures.first?.reason else {
            Issue.record("expected unreadableDirectory, got \(report.failures)")
            return
        }
        #expect(report.failures.first?.description.contains(missing.path) == true)
    }

    /// Through the process-wide loader: a library that cannot be opened fails the first task that
    /// needs it with a `URLError` carrying the load error, and its scheme is then withdrawn.
    @Test func aLibraryFailingOnFirstUseFailsTheTaskAndIsWithdrawn() async throws {
        let directory = try PluginDirectory()
        defer { directory.remove() }
        try directory.addLibrary(PluginProducts.noEntry)
        try directory.writeManifest("noentry.json", plugin: "noentry", library: "libCourierTestPluginNoEntry.so",
                                    schemes: [("courier-noentry", ["read"])])
        let report = CourierPlugins.load(directory: directory.url)
        #expect(report.failures.isEmpty)
        #expect(CourierPlugins.loaded.contains { $0.name == "noentry" })
        let url = URL(string: "courier-noentry://resource")!
        let first = await fetch(url)
        #expect(first.urlError?.code == .unsupportedURL)
        #expect(first.urlError?.failingURL == url)
        let underlying = first.urlError?.userInfo[NSUnderlyingErrorKey] as? PluginLoadError
        #expect(underlying?.reason == .missingEntrySymbol)
        #expect(CourierPlugins.failures.contains { $0.reason == .missingEntrySymbol && $0.file.lastPathComponent == "libCourierTestPluginNoEntry.so" })
        #expect(!CourierPlugins.loaded.contains { $0.name == "noentry" })
        let second = await fetch(url)
        #expect(second.urlError?.code == .unsupportedURL)
    }
}

/// An app's class that claims every request.
final class ClaimsEverythingProtocol: URLProtocol, @unchecked Sendable {
    override class func canInit(with request: URLRequest) -> Bool { true }
    override func startLoading() {
        client?.urlProtocol(self, didFailWithError: URLError(.cancelled))
    }
}
