import Foundation
import Courier

/// `courier --version`: the versions of courier, Courier, libcurl (and its TLS library) and
/// libssh2, the schemes served, and the plugins loaded.
///
/// The library versions come from Courier's package-level `LibraryVersions` (not public API: only
/// this tool, in the same package, reads them).
enum VersionReport {
    /// The report's lines.
    static func lines() -> [String] {
        for directory in CourierPlugins.environmentDirectories {
            CourierPlugins.load(directory: directory)
        }
        let tls = LibraryVersions.tls.map { " " + $0 } ?? ""
        var lines = [
            "courier \(LibraryVersions.courier) (Courier/\(LibraryVersions.courier)) "
                + "libcurl/\(LibraryVersions.libcurl)\(tls) libssh2/\(LibraryVersions.libssh2)",
            "libcurl: \(LibraryVersions.libcurlDescription)",
        ]
        let plugins = CourierPlugins.loaded
        let pluginSchemes = plugins.flatMap { $0.schemes.map(\.name) }
        lines.append("Protocols: " + (LibraryVersions.builtInSchemes + pluginSchemes.sorted()).joined(separator: " "))
        if plugins.isEmpty {
            lines.append("Plugins: none loaded")
        } else {
            lines.append("Plugins: " + plugins.map { plugin in
                "\(plugin.name)/\(plugin.version) (\(plugin.schemes.map(\.name).joined(separator: ", ")))"
            }.joined(separator: "; "))
        }
        return lines
    }
}
