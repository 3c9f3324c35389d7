import Courier
import Foundation

/// The `bridge-fixture` plugin (`Fixtures/bridge_fixture.c`), compiled with the system's C compiler
/// and loaded into Courier's process-wide loader once per test process, as an app would load a
/// plugin directory. Its scheme is its own, so it never collides with the plugin tests' plugins.
enum BridgeFixturePlugin {
    static let scheme = "bridge-fixture"

    /// `bridge-fixture://fixture<path>`.
    static func url(_ path: String) -> URL {
        URL(string: "\(scheme)://fixture\(path)")!
    }

    /// What `/hello` answers.
    static let hello = Data("Hello through the bridge\n".utf8)

    /// Compiles and loads the plugin (once); throws what went wrong.
    static func load() throws {
        try loaded.get()
    }

    private static let loaded: Result<Void, TestSetupError> = Result {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let repository = root.deletingLastPathComponent().deletingLastPathComponent()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-bridge-plugin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        TestProcess.removeAtExit(directory)
        let library = directory.appendingPathComponent("libCourierBridgeFixture.so")
        try TestProcess.run(try TestProcess.tool(["clang", "cc", "gcc"]),
                            ["-shared", "-fPIC", "-O1", "-std=c11", "-Wall",
                             "-I", repository.appendingPathComponent("Sources/CourierPluginABI/include").path,
                             "-o", library.path, root.appendingPathComponent("Fixtures/bridge_fixture.c").path])
        let manifest: [String: Any] = ["name": "bridge-fixture", "version": "0.1", "abiVersion": 1,
                                       "library": library.lastPathComponent,
                                       "schemes": [["name": scheme, "capabilities": ["read"]]]]
        let manifestURL = directory.appendingPathComponent("bridge-fixture.json")
        try JSONSerialization.data(withJSONObject: manifest, options: [.sortedKeys]).write(to: manifestURL)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: library.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: manifestURL.path)
        let report = CourierPlugins.load(directory: directory)
        guard report.failures.isEmpty else { throw TestSetupError("the bridge fixture plugin was refused: \(report.failures)") }
    }.mapError { $0 as? TestSetupError ?? TestSetupError("\($0)") }
}
