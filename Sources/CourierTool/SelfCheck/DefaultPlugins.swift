import Foundation
import Courier

/// The example plugins the embedded default run loads: the libraries `swift build` puts beside the
/// `courier` binary, with their manifests from the package's `Plugins/<Name>/manifest.json`.
///
/// The run copies each library and manifest into a plugin directory of its own (mode 0700, files
/// 0755 and 0644: the loader refuses anything its group or others may write) and loads it with
/// ``PluginLoadOptions/openLibrariesNow``, so every library is opened and checked before the checks
/// start, and the temporary copies can go when the run ends. A plugin whose library or manifest
/// cannot be found (a `courier` copied away from its build) is *skipped*; one the loader refuses is
/// *broken*, and its checks count as unexpected.
enum DefaultPlugins {
    /// One example plugin.
    struct Plugin: Sendable {
        /// Its name and the one scheme it serves.
        let scheme: String
        /// The library file `swift build` makes.
        let library: String
        /// Its folder under `Plugins/` in the package.
        let folder: String

        /// The manifest's name in the run's plugin directory.
        var manifestName: String { "\(scheme).json" }
    }

    static let plugins = [
        Plugin(scheme: "gopher", library: "libCourierGopher.so", folder: "Gopher"),
        Plugin(scheme: "zip", library: "libCourierZip.so", folder: "Zip"),
    ]

    /// The directory holding the running executable (symbolic links resolved).
    static var executableDirectory: URL? {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return URL(fileURLWithPath: path).deletingLastPathComponent()
        }
        guard let argument = CommandLine.arguments.first, argument.contains("/") else { return nil }
        return URL(fileURLWithPath: argument).resolvingSymlinksInPath().deletingLastPathComponent()
    }

    /// The source tree this tool was compiled from (`Sources/CourierTool/SelfCheck/<this file>` → its
    /// root).
    private static let sourceRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// `plugin`'s manifest: beside the library as `<scheme>.json` (a release folder made by
    /// `scripts/release`), in the package around the build products directory `products` (the
    /// products sit a few levels below the package root, under `.build`), else in the source tree
    /// this tool was built from; nil when none has it.
    static func manifest(for plugin: Plugin, near products: URL) -> URL? {
        let beside = products.appendingPathComponent(plugin.manifestName)
        if FileManager.default.isReadableFile(atPath: beside.path) { return beside }
        var roots: [URL] = []
        var current = products.standardizedFileURL
        for _ in 0..<6 {
            roots.append(current)
            let parent = current.deletingLastPathComponent()
            if parent.path == current.path { break }
            current = parent
        }
        roots.append(sourceRoot)
        return roots
            .map { $0.appendingPathComponent("Plugins/\(plugin.folder)/manifest.json") }
            .first { FileManager.default.isReadableFile(atPath: $0.path) }
    }

    /// Copies the plugins found beside the executable into `directory` (created, mode 0700), loads
    /// them, and says for each scheme whether its checks can run. `log` receives one line per event
    /// worth knowing (with `-v`).
    static func install(into directory: URL, products: URL? = executableDirectory,
                        log: (String) -> Void = { _ in }) -> [String: Availability] {
        var availability: [String: Availability] = [:]
        guard let products else {
            for plugin in plugins { availability[plugin.scheme] = .skipped("cannot tell where courier is") }
            return availability
        }
        var copied: [Plugin] = []
        let manager = FileManager.default
        do {
            try manager.createDirectory(at: directory, withIntermediateDirectories: false,
                                        attributes: [.posixPermissions: 0o700])
            try manager.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
        } catch {
            for plugin in plugins {
                availability[plugin.scheme] = .broken("cannot create the plugin directory: \(error.localizedDescription)")
            }
            return availability
        }
        for plugin in plugins {
            let library = products.appendingPathComponent(plugin.library)
            guard manager.isReadableFile(atPath: library.path) else {
                availability[plugin.scheme] = .skipped("\(plugin.library) not found beside courier")
                continue
            }
            guard let manifest = manifest(for: plugin, near: products) else {
                availability[plugin.scheme] = .skipped("Plugins/\(plugin.folder)/manifest.json not found")
                continue
            }
            do {
                let libraryCopy = directory.appendingPathComponent(plugin.library)
                let manifestCopy = directory.appendingPathComponent(plugin.manifestName)
                try manager.copyItem(at: library, to: libraryCopy)
                try manager.setAttributes([.posixPermissions: 0o755], ofItemAtPath: libraryCopy.path)
                try manager.copyItem(at: manifest, to: manifestCopy)
                try manager.setAttributes([.posixPermissions: 0o644], ofItemAtPath: manifestCopy.path)
                copied.append(plugin)
                log("plugin \(plugin.scheme): \(library.path) with \(manifest.path)")
            } catch {
                availability[plugin.scheme] = .broken("cannot copy it: \(error.localizedDescription)")
            }
        }
        guard !copied.isEmpty else { return availability }

        let report = CourierPlugins.load(directory: directory, options: .openLibrariesNow)
        let served = Set(CourierPlugins.loaded.flatMap { $0.schemes.map(\.name) })
        for plugin in copied {
            let files: Set<String> = [plugin.library, plugin.manifestName]
            let failures = report.failures.filter { files.contains($0.file.lastPathComponent) }
            if failures.isEmpty || served.contains(plugin.scheme) {
                // Served: by this copy, or (a duplicate) by the same plugin loaded earlier from
                // COURIER_PLUGIN_PATH or --plugins.
                for failure in failures { log("plugin \(plugin.scheme): \(failure.message)") }
                availability[plugin.scheme] = served.contains(plugin.scheme) ? .ready
                    : .broken("loaded, but no plugin serves \(plugin.scheme):")
            } else {
                availability[plugin.scheme] = .broken(failures.map(\.message).joined(separator: "; "))
            }
        }
        return availability
    }
}
