#if COURIER_FUZZ
@testable import Courier
import Foundation

/// `PluginManifest.decode`: a manifest is read before its plugin is trusted with anything. What it
/// accepts has valid, distinct schemes within the limit and a bare library file name, and written
/// back as JSON decodes to the same manifest.
enum PluginManifestHarness {
    static func run(_ input: Data) {
        guard case .success(let manifest) = PluginManifest.decode(input) else { return }
        fuzzCheck(!manifest.schemes.isEmpty && manifest.schemes.count <= PluginManifest.maximumSchemes,
                  "\(manifest.schemes.count) schemes")
        fuzzCheck(manifest.schemes.allSatisfy { PluginManifest.isValidScheme($0.name) }, "schemes \(manifest.schemes)")
        fuzzCheck(Set(manifest.schemes.map(\.name)).count == manifest.schemes.count, "repeated scheme")
        fuzzCheck(!manifest.library.contains("/") && !manifest.library.isEmpty, "library \(manifest.library)")

        let document: [String: Any] = [
            "name": manifest.name, "version": manifest.version, "abiVersion": manifest.abiVersion,
            "library": manifest.library,
            "schemes": manifest.schemes.map { scheme in
                ["name": scheme.name,
                 "capabilities": PluginCapabilities.names.filter { scheme.capabilities.contains($0.capability) }.map(\.name)]
            },
        ]
        guard let json = try? JSONSerialization.data(withJSONObject: document) else {
            fuzzCheck(false, "accepted manifest cannot be written as JSON: \(manifest)")
            return
        }
        guard case .success(let again) = PluginManifest.decode(json) else {
            fuzzCheck(false, "re-written manifest is refused: \(String(decoding: json, as: UTF8.self))")
            return
        }
        fuzzCheck(again == manifest, "round trip changed \(manifest)")
    }
}
#endif
