import Foundation
import Testing

/// A fresh place to run an example as its documentation shows, removed by `remove()`:
/// - a home directory, `HOME` for the example (`~/courier-plugins` goes there). Its path is read as
///   `/home/me` in what the examples print, the user the documentation speaks of;
/// - a working directory standing for a checkout of this repository: `.build/debug` and
///   `.build/release` are the products `swift build` made for this test run, `Plugins` is the
///   repository's, and `path/to` the repository itself (for `-I path/to/Sources/…`);
/// - `PATH` starts with the products, so `courier` is the one just built; Courier's data and cache
///   directories are inside the workspace; `COURIER_PLUGIN_PATH` and `COURIER_LOG` are unset.
struct ExampleWorkspace {
    /// The user's home directory as the documentation shows it.
    static let documentedHome = "/home/me"

    let root: URL
    let home: URL
    let work: URL
    let environment: [String: String]

    init() throws {
        let manager = FileManager.default
        root = manager.temporaryDirectory.appendingPathComponent("courier-examples-\(UUID().uuidString)", isDirectory: true)
        home = root.appendingPathComponent("home/me", isDirectory: true)
        work = root.appendingPathComponent("work", isDirectory: true)
        for directory in [home, work, work.appendingPathComponent(".build"), work.appendingPathComponent("path")] {
            try manager.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        }
        let products = try ExampleProducts.products()
        let repository = ExampleProducts.repositoryRoot
        try manager.createSymbolicLink(at: work.appendingPathComponent(".build/debug"), withDestinationURL: products)
        try manager.createSymbolicLink(at: work.appendingPathComponent(".build/release"), withDestinationURL: products)
        try manager.createSymbolicLink(at: work.appendingPathComponent("Plugins"), withDestinationURL: repository.appendingPathComponent("Plugins"))
        try manager.createSymbolicLink(at: work.appendingPathComponent("path/to"), withDestinationURL: repository)

        var environment = ProcessInfo.processInfo.environment
        for name in ["COURIER_PLUGIN_PATH", "COURIER_LOG", "BASH_ENV", "ENV", "CDPATH"] {
            environment[name] = nil
        }
        environment["HOME"] = home.path
        environment["PATH"] = products.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["COURIER_DATA_HOME"] = root.appendingPathComponent("data").path
        environment["XDG_CACHE_HOME"] = root.appendingPathComponent("cache").path
        environment["TZ"] = "UTC"
        self.environment = environment
    }

    func remove() { try? FileManager.default.removeItem(at: root) }

    /// Text the examples printed, with this workspace's home read as ``documentedHome``.
    func normalized(_ output: String) -> String {
        output.replacingOccurrences(of: home.path, with: Self.documentedHome)
    }

    /// Runs the built executable `name` with `arguments` in `directory` (the working directory by
    /// default).
    func run(_ name: String, _ arguments: [String] = [], in directory: URL? = nil) async throws -> ExampleProcess.Result {
        let process = ExampleProcess(executable: try ExampleProducts.product(name), arguments: arguments,
                                     directory: directory ?? work, environment: environment)
        let result = try await process.run()
        return ExampleProcess.Result(status: result.status, output: normalized(result.output))
    }

    /// Runs `script` with bash in the working directory.
    func runScript(_ script: String) async throws -> ExampleProcess.Result {
        let file = root.appendingPathComponent("script-\(UUID().uuidString).sh")
        try script.write(to: file, atomically: true, encoding: .utf8)
        let process = ExampleProcess(executable: try Self.bash(), arguments: [file.path], directory: work,
                                     environment: environment)
        let result = try await process.run()
        return ExampleProcess.Result(status: result.status, output: normalized(result.output))
    }

    /// Copies the archive the plugin examples read (a committed fixture) to `~/site.zip`.
    func addSiteArchive() throws {
        let fixture = ExampleProducts.repositoryRoot.appendingPathComponent("Tests/ExampleTests/Fixtures/site.zip")
        try FileManager.default.copyItem(at: fixture, to: home.appendingPathComponent("site.zip"))
    }

    /// Installs a plugin library as a plugin directory `~/<directory>` holding it and a manifest for
    /// one read-only scheme (modes 0755 and 0644, which the loader asks for).
    func installPlugin(library: URL, directory: String, name: String, scheme: String) throws {
        let manager = FileManager.default
        let target = home.appendingPathComponent(directory, isDirectory: true)
        try manager.createDirectory(at: target, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let installed = target.appendingPathComponent(library.lastPathComponent)
        try manager.copyItem(at: library, to: installed)
        try manager.setAttributes([.posixPermissions: 0o755], ofItemAtPath: installed.path)
        let manifest = """
            {"name": "\(name)", "version": "1.0.0", "abiVersion": 1, "library": "\(library.lastPathComponent)",
             "schemes": [{"name": "\(scheme)", "capabilities": ["read"]}]}
            """
        let manifestURL = target.appendingPathComponent("\(name).json")
        try Data(manifest.utf8).write(to: manifestURL)
        try manager.setAttributes([.posixPermissions: 0o644], ofItemAtPath: manifestURL.path)
    }

    /// `/bin/bash` or the first bash on `PATH`.
    private static func bash() throws -> URL {
        let candidates = ["/bin/bash", "/usr/bin/bash"]
            + (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/bash" }
        let found = candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
        return URL(fileURLWithPath: try #require(found, "no bash to run the shell examples"))
    }
}
