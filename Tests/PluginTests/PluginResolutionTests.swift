import Foundation
import Testing
@testable import Courier

/// What the loader (``ProtocolResolver``) answers for a plugin scheme: the plugin bridge, with the
/// capabilities the plugin's manifest declares for that scheme. Each test uses a loader and a
/// directory of its own.
@Suite("Plugin resolution")
struct PluginResolutionTests {
    @Test func aPluginSchemeResolvesWithTheCapabilitiesItsManifestDeclares() throws {
        let directory = try PluginDirectory()
        defer { directory.remove() }
        try directory.addLibrary(PluginProducts.gopher)
        try directory.writeManifest("resolving.json", plugin: "resolving", library: "libCourierGopher.so",
                                    schemes: [("resolving-list", ["read", "list"]), ("resolving-store", ["read", "write", "resume"])])
        let loader = PluginLoader()
        try #require(loader.load(directory: directory.url, options: []).failures.isEmpty)
        let resolver = ProtocolResolver(configured: [], builtIns: BuiltInHandlers.table, plugins: loader)
        let resolved = resolver.resolve(URLRequest(url: URL(string: "resolving-store://host/x")!))
        #expect(resolved?.capabilities == [.read, .write, .resume, .flowControl])
    }
}
