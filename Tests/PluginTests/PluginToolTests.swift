import Foundation
import Testing

/// `courier --plugins DIR URL…`, `courier plugins [DIR]` and `COURIER_PLUGIN_PATH`, run as a
/// subprocess: the built `courier` binary sits next to the plugin libraries.
@Suite("courier and plugins")
struct PluginToolTests {
    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `courier` with `arguments`, killing it after 30 seconds.
    func courier(_ arguments: [String], environment: [String: String] = [:]) async throws -> Run {
        let directory = try #require(PluginProducts.directory, "build products not found: run `swift build` first")
        let binary = directory.appendingPathComponent("courier")
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "courier was not built")
        let scratch = try PluginDirectory()
        defer { scratch.remove() }
        let outURL = scratch.file("stdout"), errURL = scratch.file("stderr")
        try Data().write(to: outURL)
        try Data().write(to: errURL)
        let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = err
        var base = ProcessInfo.processInfo.environment
        base["COURIER_PLUGIN_PATH"] = nil
        process.environment = base.merging(environment) { $1 }
        try process.run()
        try? out.close()
        try? err.close()
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning && Date() < deadline { try await Task.sleep(nanoseconds: 20_000_000) }
        if process.isRunning {
            process.terminate()
            Issue.record("courier \(arguments) did not finish in 30 s")
        }
        process.waitUntilExit()
        return Run(status: process.terminationStatus,
                   stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
                   stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }

    private func examplePlugins() throws -> PluginDirectory {
        let directory = try PluginDirectory()
        try directory.addLibrary(PluginProducts.gopher)
        try directory.addManifest(PluginProducts.manifest("Gopher"), as: "gopher.json")
        try directory.addLibrary(PluginProducts.zip)
        try directory.addManifest(PluginProducts.manifest("Zip"), as: "zip.json")
        return directory
    }

    @Test func pluginsListsLoadedPluginsAndTheirSchemes() async throws {
        let directory = try examplePlugins()
        defer { directory.remove() }
        let run = try await courier(["plugins", directory.url.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("gopher 1.0.0\n  scheme: gopher (read, list)\n  library: \(directory.url.path)/libCourierGopher.so"))
        #expect(run.stdout.contains("zip 1.0.0\n  scheme: zip (read, list, resume)"))
        #expect(!run.stdout.contains("Load errors"))
    }

    @Test func pluginsListsLoadErrorsAndFails() async throws {
        let directory = try examplePlugins()
        defer { directory.remove() }
        try directory.addLibrary(PluginProducts.noEntry)
        try directory.writeManifest("noentry.json", plugin: "noentry", library: "libCourierTestPluginNoEntry.so",
                                    schemes: [("noentry", ["read"])])
        let run = try await courier(["plugins", directory.url.path])
        #expect(run.status == 10)
        #expect(run.stdout.contains("gopher 1.0.0"))
        #expect(run.stdout.contains("Load errors:\n  \(directory.url.path)/libCourierTestPluginNoEntry.so: the library does not export courier_plugin_entry"))
    }

    @Test func withNoPluginsThereIsNothingToList() async throws {
        let run = try await courier(["plugins"])
        #expect(run.status == 0)
        #expect(run.stdout == "No plugins loaded.\n")
    }

    @Test func pluginsFromTheCommandLineServeURLs() async throws {
        let directory = try examplePlugins()
        defer { directory.remove() }
        var writer = ZipArchiveWriter()
        writer.add("hello.txt", Data("hello from a zip entry\n".utf8))
        let archive = directory.file("site.zip")
        try writer.data.write(to: archive)
        let run = try await courier(["--plugins", directory.url.path, "zip://\(archive.path)!/hello.txt"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "hello from a zip entry\n")
        // Without the plugin the scheme is unknown.
        let without = try await courier(["zip://\(archive.path)!/hello.txt"])
        #expect(without.status == 2)
        #expect(without.stderr.contains("unsupportedURL"))
    }

    @Test func theEnvironmentVariableLoadsPlugins() async throws {
        let directory = try examplePlugins()
        defer { directory.remove() }
        let server = try #require(GopherTestServer.shared)
        let run = try await courier([server.url("/0/hello.txt").absoluteString],
                                    environment: ["COURIER_PLUGIN_PATH": "/nonexistent-dir:" + directory.url.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == GopherTestServer.helloText)
        let listed = try await courier(["plugins"], environment: ["COURIER_PLUGIN_PATH": directory.url.path])
        #expect(listed.stdout.contains("gopher 1.0.0"))
    }

    @Test func aRefusedPluginIsReportedAndTheOthersStillWork() async throws {
        let directory = try examplePlugins()
        defer { directory.remove() }
        try directory.writeFile("bad.json", Data("{".utf8))
        let server = try #require(GopherTestServer.shared)
        let run = try await courier(["--plugins", directory.url.path, server.url("/0/hello.txt").absoluteString])
        #expect(run.status == 0)
        #expect(run.stdout == GopherTestServer.helloText)
        #expect(run.stderr.contains("courier: plugin \(directory.url.path)/bad.json: invalid manifest"))
    }
}
