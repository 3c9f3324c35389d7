import Foundation
import Testing

/// The plugin libraries `swift build` made, next to this test bundle — and their manifests, in the
/// source tree. Tests copy both into directories of their own and load those, as an app would.
enum PluginProducts {
    /// The repository root: this file is `Tests/PluginTests/Support/<name>.swift`.
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The build products directory: `COURIER_PLUGIN_PRODUCTS`, or the test executable's directory
    /// (or one of the few above it, inside an .xctest bundle).
    static let directory: URL? = {
        let manager = FileManager.default
        if let override = ProcessInfo.processInfo.environment["COURIER_PLUGIN_PRODUCTS"] {
            return URL(fileURLWithPath: override, isDirectory: true)
        }
        var starts: [URL] = []
        if let executable = try? manager.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            starts.append(URL(fileURLWithPath: executable).deletingLastPathComponent())
        }
        starts.append(Bundle.main.bundleURL)
        if let argument = CommandLine.arguments.first {
            starts.append(URL(fileURLWithPath: argument).deletingLastPathComponent())
        }
        for start in starts {
            var current = start.standardizedFileURL
            for _ in 0..<4 {
                if manager.fileExists(atPath: current.appendingPathComponent("libCourierGopher.so").path) { return current }
                current = current.deletingLastPathComponent()
            }
        }
        return nil
    }()

    /// The built library `name` (`libCourierGopher.so`); fails the test when it was not built.
    static func library(_ name: String) throws -> URL {
        let directory = try #require(directory, "plugin libraries not found next to the test bundle: run `swift build` first")
        let url = directory.appendingPathComponent(name)
        try #require(FileManager.default.fileExists(atPath: url.path), "\(name) was not built: run `swift build` first")
        return url
    }

    /// A plugin's manifest in the source tree (`Plugins/Gopher/manifest.json`).
    static func manifest(_ plugin: String) -> URL {
        repositoryRoot.appendingPathComponent("Plugins/\(plugin)/manifest.json")
    }

    static var gopher: URL { get throws { try library("libCourierGopher.so") } }
    static var zip: URL { get throws { try library("libCourierZip.so") } }
    // The test-only fixtures are not products: the tests compile them (``FixturePlugins``).
    static var noEntry: URL { get throws { try FixturePlugins.library("NoEntry") } }
    static var futureABI: URL { get throws { try FixturePlugins.library("FutureABI") } }
    static var misbehaving: URL { get throws { try FixturePlugins.library("Misbehaving") } }
    static var redirecting: URL { get throws { try FixturePlugins.library("Redirecting") } }
}
