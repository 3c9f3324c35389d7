import Foundation
import Testing
@testable import Courier

@Suite("Plugin manifests and COURIER_PLUGIN_PATH")
struct PluginManifestTests {
    @Test func theExampleManifestsDecode() throws {
        for (plugin, library) in [("Gopher", "libCourierGopher.so"), ("Zip", "libCourierZip.so")] {
            let data = try Data(contentsOf: PluginProducts.manifest(plugin))
            let manifest = try PluginManifest.decode(data).get()
            #expect(manifest.library == library)
            #expect(manifest.abiVersion == 1)
        }
    }

    @Test func capabilitiesNeedReadOrWrite() {
        let json = #"{"name":"x","version":"1","abiVersion":1,"library":"libx.so","schemes":[{"name":"x","capabilities":["list"]}]}"#
        guard case .failure(.invalidManifest(let detail)) = PluginManifest.decode(Data(json.utf8)) else {
            Issue.record("accepted a scheme that can neither read nor write")
            return
        }
        #expect(detail.contains("read"))
    }

    @Test func aSchemeListedTwiceIsRefused() {
        let json = #"{"name":"x","version":"1","abiVersion":1,"library":"libx.so","schemes":[{"name":"x","capabilities":["read"]},{"name":"x","capabilities":["read"]}]}"#
        guard case .failure(.invalidManifest) = PluginManifest.decode(Data(json.utf8)) else {
            Issue.record("accepted a duplicate scheme")
            return
        }
    }

    @Test func schemeNamesFollowRFC3986InLowercase() {
        for good in ["gopher", "zip", "x-custom+v1.2", "a"] { #expect(PluginManifest.isValidScheme(good), "\(good)") }
        for bad in ["", "Zip", "1x", "-x", "x y", "x:", String(repeating: "a", count: 65)] {
            #expect(!PluginManifest.isValidScheme(bad), "\(bad)")
        }
    }

    @Test func capabilitiesDescribeThemselves() {
        #expect(PluginCapabilities([.read, .list]).description == "read, list")
        #expect(PluginCapabilities([]).description == "none")
        #expect(PluginCapabilities(names: ["read", "resume"]) == [.read, .resume])
        #expect(PluginCapabilities(names: ["read", "teleport"]) == nil)
    }

    @Test func thePluginPathListsAbsoluteDirectoriesOnce() {
        let environment = ["COURIER_PLUGIN_PATH": "/opt/a::relative/b:/opt/a:/usr/lib/courier/"]
        let directories = PluginEnvironment.directories(environment, privileged: false)
        #expect(directories.map(\.path) == ["/opt/a", "/usr/lib/courier"])
        #expect(PluginEnvironment.directories([:], privileged: false).isEmpty)
    }

    @Test func thePluginPathIsIgnoredInAPrivilegedProcess() {
        let environment = ["COURIER_PLUGIN_PATH": "/opt/a"]
        #expect(PluginEnvironment.directories(environment, privileged: true).isEmpty)
        // The test runner itself is not setuid.
        #expect(!PluginEnvironment.isPrivileged)
    }

    @Test func loadErrorsNameTheFileAndTheReason() {
        let error = PluginLoadError(file: URL(fileURLWithPath: "/plugins/x.json"),
                                    reason: .unsupportedABIVersion(found: 7, supported: 1...1))
        #expect(error.description == "/plugins/x.json: unsupported plugin ABI version 7 (this host supports 1)")
        #expect(error.localizedDescription == error.description)
    }
}
