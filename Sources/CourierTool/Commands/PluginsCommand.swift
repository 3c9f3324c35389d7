import ArgumentParser
import Courier
import Foundation

/// `courier plugins [DIR ...]`: lists the plugins loaded (from `COURIER_PLUGIN_PATH` and each DIR),
/// their schemes and libraries, and every load error.
struct PluginsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugins",
        abstract: "List the handler plugins loaded from COURIER_PLUGIN_PATH and each DIR, and any load errors.",
        usage: "courier plugins [<dir> ...]",
        discussion: """
            Every library is opened and checked against its manifest, so errors that a fetch would \
            meet only when first using a scheme are listed too. The exit status is 0 when nothing \
            was refused, \(ToolExit.other.rawValue) otherwise.
            """
    )

    @Argument(help: ArgumentHelp("Plugin directories to load (each holds manifests and libraries).", valueName: "dir"))
    var directories: [String] = []

    /// Runs `courier plugins` with `arguments` (the words after `plugins`) and exits, with
    /// ``ToolExit/usage`` for command-line mistakes as the main command does.
    static func main(arguments: [String]) async -> Never {
        await parseRunAndExit(arguments)
    }

    func run() throws {
        // Loading a directory again is harmless; with openLibrariesNow it also opens the libraries
        // of COURIER_PLUGIN_PATH, which were loaded lazily.
        for directory in CourierPlugins.environmentDirectories + directories.map(PluginDirectories.url) {
            CourierPlugins.load(directory: directory, options: .openLibrariesNow)
        }
        let loaded = CourierPlugins.loaded
        var seen = Set<PluginLoadError>()
        let failures = CourierPlugins.failures.filter { seen.insert($0).inserted }
        if loaded.isEmpty {
            Console.out("No plugins loaded.")
        }
        for plugin in loaded {
            Console.out("\(plugin.name) \(plugin.version)")
            for scheme in plugin.schemes {
                Console.out("  scheme: \(scheme.name) (\(scheme.capabilities))")
            }
            Console.out("  library: \(plugin.libraryURL.path)")
        }
        if !failures.isEmpty {
            Console.out("Load errors:")
            for failure in failures { Console.out("  \(failure.description)") }
            throw ExitCode(ToolExit.other.rawValue)
        }
    }
}

/// Loading the directories given with `--plugins`.
enum PluginDirectories {
    /// `path` as a directory URL, relative paths against the current directory.
    static func url(_ path: String) -> URL {
        URL(fileURLWithPath: path, isDirectory: true).standardizedFileURL
    }

    /// Loads each directory; a refused plugin is reported on standard error and the others load.
    static func load(_ paths: [String]) {
        for path in paths {
            let report = CourierPlugins.load(directory: url(path))
            for failure in report.failures {
                Console.err("courier: plugin \(failure.description)")
            }
        }
    }
}
