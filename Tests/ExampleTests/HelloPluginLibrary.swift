import Foundation
import Testing

/// Plugins.md's Swift plugin as a shared library. `swift build` compiles the `HelloPlugin` target (the
/// example, with the kit) but makes no library of it: a test fixture is no product of the package.
/// This links the objects it compiled — the example's, the kit's and the ABI's — into one, as SwiftPM
/// links a dynamic library product (a fraction of a second).
enum HelloPluginLibrary {
    static let targets = ["HelloPlugin", "CourierPluginKit", "CourierPluginABI"]

    static func link(to library: URL, in workspace: ExampleWorkspace) async throws {
        let products = try ExampleProducts.products()
        var objects: [String] = []
        for target in targets {
            let directory = products.appendingPathComponent("\(target).build")
            let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".o") }.sorted()
            try #require(!files.isEmpty, "no objects in \(directory.path): run `swift build` first")
            objects += files.map { directory.appendingPathComponent($0).path }
        }
        let swiftc = try #require(
            (workspace.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/swiftc" }
                .first { FileManager.default.isExecutableFile(atPath: $0) },
            "no swiftc on PATH to link the Swift plugin example")
        let process = ExampleProcess(executable: URL(fileURLWithPath: swiftc),
                                     arguments: ["-emit-library", "-o", library.path] + objects,
                                     directory: workspace.work, environment: workspace.environment)
        let result = try await process.run()
        try #require(result.status == 0, "linking \(library.lastPathComponent): \(result.output)")
    }
}
