import Foundation
import Testing

/// Where the examples' sources and the built executables are.
enum ExampleProducts {
    /// The repository root: this file is `Tests/ExampleTests/ExampleProducts.swift`.
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The build products directory `swift build` filled (it holds `courier`, the plugin libraries
    /// and the examples): the test executable's directory or one of the few above it, inside an
    /// .xctest bundle.
    static let directory: URL? = {
        let manager = FileManager.default
        var starts: [URL] = []
        if let executable = try? manager.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            starts.append(URL(fileURLWithPath: executable).deletingLastPathComponent())
        }
        starts.append(Bundle.main.bundleURL)
        for start in starts {
            var current = start.standardizedFileURL
            for _ in 0..<4 {
                if manager.isExecutableFile(atPath: current.appendingPathComponent("courier").path),
                   manager.fileExists(atPath: current.appendingPathComponent("HelloData").path)
                {
                    return current
                }
                current = current.deletingLastPathComponent()
            }
        }
        return nil
    }()

    /// The products directory; fails the test when the package was not built.
    static func products() throws -> URL {
        try #require(directory, "`courier` and the examples not found next to the test bundle: run `swift build` first")
    }

    /// The built executable or library `name`; fails the test when it is missing.
    static func product(_ name: String) throws -> URL {
        let url = try products().appendingPathComponent(name)
        try #require(FileManager.default.fileExists(atPath: url.path), "\(name) was not built: run `swift build` first")
        return url
    }

    /// The text of a file of the repository (`Examples/HelloData/main.swift`).
    static func source(_ path: String) throws -> String {
        try String(contentsOf: repositoryRoot.appendingPathComponent(path), encoding: .utf8)
    }

    /// The Swift sources of example `name` (`Examples/<name>/*.swift`), each path with its text.
    static func exampleSources(_ name: String) throws -> [(path: String, text: String)] {
        let directory = "Examples/\(name)"
        let files = try FileManager.default.contentsOfDirectory(atPath: repositoryRoot.appendingPathComponent(directory).path)
        return try files.filter { $0.hasSuffix(".swift") }.sorted().map { ("\(directory)/\($0)", try source("\(directory)/\($0)")) }
    }
}
