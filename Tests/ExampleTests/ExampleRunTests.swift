import Foundation
import Testing

/// Runs each example of `README.md` and `Documentation/*.md` as its documentation shows and checks
/// that it prints what the documentation says (``DocumentationBlock`` describes the markers). Each
/// test works in a fresh ``ExampleWorkspace``.
@Suite struct ExampleRunTests {
    /// Every example name these tests run; ``DocumentationMarkerTests`` checks that it is the set of
    /// names the documentation marks.
    static let examples: Set<String> = [
        "HelloData", "ListDirectory", "StreamFile", "courier-missing-file",
        "LoadPlugins", "install-plugins", "courier-plugins", "c-plugin", "c-listing", "HelloPlugin",
        "BridgeFile",
    ]

    /// Prepares a fresh workspace with `prepare`, runs example `name`'s ```` ```console ```` block in it
    /// and expects each command to print what the block says it prints.
    private func expectTranscript(of name: String,
                                  sourceLocation: SourceLocation = #_sourceLocation,
                                  prepare: (ExampleWorkspace) async throws -> Void = { _ in }) async throws
    {
        let workspace = try ExampleWorkspace()
        defer { workspace.remove() }
        try await prepare(workspace)
        let transcript = ConsoleTranscript(try DocumentationMarkerTests.block(of: name, language: "console").text)
        let result = try await workspace.runScript(transcript.script)
        #expect(transcript.steps(fromOutput: result.output) == transcript.steps, sourceLocation: sourceLocation)
    }

    /// Runs the plugin installation of Plugins.md ("Installing a plugin") in `workspace`; fails the
    /// test when it prints anything or fails.
    private func installPlugins(in workspace: ExampleWorkspace) async throws {
        let block = try DocumentationMarkerTests.block(of: "install-plugins", language: "sh")
        let result = try await workspace.runScript("set -e\n" + block.text)
        try #require(result == .init(status: 0, output: ""), "install-plugins: status \(result.status): \(result.output)")
    }

    // MARK: README

    @Test func helloDataPrintsWhatTheREADMEShows() async throws {
        let workspace = try ExampleWorkspace()
        defer { workspace.remove() }
        let result = try await workspace.run("HelloData")
        let documented = try DocumentationMarkerTests.output(of: "HelloData")
        #expect(result == .init(status: 0, output: documented + "\n"))
    }

    @Test func listDirectoryPrintsEachEntryOfTheCurrentDirectory() async throws {
        let workspace = try ExampleWorkspace()
        defer { workspace.remove() }
        let directory = workspace.root.appendingPathComponent("reports", isDirectory: true)
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("archive"), withIntermediateDirectories: true)
        try Data("twelve bytes".utf8).write(to: directory.appendingPathComponent("notes.txt"))
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("archive").path)
        let archiveSize = try #require((attributes[.size] as? NSNumber)?.intValue)
        let result = try await workspace.run("ListDirectory", in: directory)
        #expect(result == .init(status: 0, output: "directory \(archiveSize) archive\nfile 12 notes.txt\n"))
    }

    @Test func streamFilePrintsTheWholeFileBeforeItEnds() async throws {
        let workspace = try ExampleWorkspace()
        defer { workspace.remove() }
        let hostname = try String(contentsOfFile: "/etc/hostname", encoding: .utf8)
        let result = try await workspace.run("StreamFile")
        #expect(result == .init(status: 0, output: hostname))
    }

    // MARK: FoundationBridge.md

    @Test func bridgeFileLoadsAFileURLThroughFoundationNetworking() async throws {
        let workspace = try ExampleWorkspace()
        defer { workspace.remove() }
        let result = try await workspace.run("BridgeFile")
        let documented = try DocumentationMarkerTests.output(of: "BridgeFile")
        #expect(result == .init(status: 0, output: documented + "\n"))
    }

    @Test func courierReportsAMissingFileAsTheREADMEShows() async throws {
        try #require(!FileManager.default.fileExists(atPath: "/tmp/nope"), "the README's example needs /tmp/nope not to exist")
        try await expectTranscript(of: "courier-missing-file")
    }

    // MARK: Plugins.md

    @Test func installingPluginsGivesTheModesTheLoaderAsksFor() async throws {
        let workspace = try ExampleWorkspace()
        defer { workspace.remove() }
        try await installPlugins(in: workspace)
        let directory = workspace.home.appendingPathComponent("courier-plugins")
        var modes: [String: Int] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            let attributes = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(name).path)
            modes[name] = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
        }
        #expect(modes == ["gopher.json": 0o644, "libCourierGopher.so": 0o755, "libCourierZip.so": 0o755, "zip.json": 0o644])
    }

    @Test func courierListsAndLoadsTheInstalledPlugins() async throws {
        try await expectTranscript(of: "courier-plugins") { workspace in
            try await installPlugins(in: workspace)
            try workspace.addSiteArchive()
        }
    }

    @Test func loadPluginsLoadsTheDirectoryAndFetchesFromAPlugin() async throws {
        try await expectTranscript(of: "LoadPlugins") { workspace in
            try await installPlugins(in: workspace)
            try workspace.addSiteArchive()
        }
    }

    @Test func cPluginBuildsWithTheShownCommandAndAnswers() async throws {
        try await expectTranscript(of: "c-plugin") { workspace in
            let source = try DocumentationMarkerTests.block(of: "c-plugin", language: "c")
            try Data((source.text + "\n").utf8).write(to: workspace.work.appendingPathComponent("hello.c"))
            let command = try DocumentationMarkerTests.block(of: "c-plugin", language: "sh")
            let build = try await workspace.runScript("set -e\n" + command.text)
            try #require(build == .init(status: 0, output: ""), "building hello.c: \(build.output)")
            try workspace.installPlugin(library: workspace.work.appendingPathComponent("libhello.so"),
                                        directory: "hello-plugin", name: "hello", scheme: "hello")
        }
    }

    @Test func cListingCompilesInTheCPluginsStartFunction() async throws {
        let workspace = try ExampleWorkspace()
        defer { workspace.remove() }
        let plugin = try DocumentationMarkerTests.block(of: "c-plugin", language: "c")
        let listing = try DocumentationMarkerTests.block(of: "c-listing", language: "c")
        let source = plugin.text + "\n\nvoid hello_list(hello *h);\nvoid hello_list(hello *h) {\n" + listing.text + "\n}\n"
        try Data(source.utf8).write(to: workspace.work.appendingPathComponent("listing.c"))
        let result = try await workspace.runScript(
            "cc -fsyntax-only -std=c11 -Wall -Wextra -Werror -I path/to/Sources/CourierPluginABI/include listing.c")
        #expect(result == .init(status: 0, output: ""))
    }

    @Test func swiftPluginLinksLoadsAndAnswers() async throws {
        try await expectTranscript(of: "HelloPlugin") { workspace in
            let library = workspace.work.appendingPathComponent("libHello.so")
            try await HelloPluginLibrary.link(to: library, in: workspace)
            try workspace.installPlugin(library: library, directory: "hello-plugin", name: "hello", scheme: "hello")
        }
    }
}
