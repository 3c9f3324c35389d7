import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `COURIER_PLUGIN_PATH`: directories of plugins every Courier process loads, like GIO's
/// `GIO_EXTRA_MODULES`.
enum PluginEnvironment {
    /// The variable's name.
    static let variable = "COURIER_PLUGIN_PATH"

    /// The directories named by `COURIER_PLUGIN_PATH` in `environment`: colon-separated absolute
    /// paths, empty and relative entries skipped, each once. None in a setuid or setgid process,
    /// where the environment belongs to a less trusted user.
    static func directories(_ environment: [String: String], privileged: Bool = isPrivileged) -> [URL] {
        guard !privileged, let value = environment[variable] else { return [] }
        var seen = Set<String>()
        var result: [URL] = []
        for entry in value.split(separator: ":", omittingEmptySubsequences: true).map(String.init)
        where entry.hasPrefix("/") && seen.insert(entry).inserted {
            result.append(URL(fileURLWithPath: entry, isDirectory: true))
        }
        return result
    }

    /// Whether this process runs with privileges its user does not have (setuid or setgid), as
    /// glib's `g_check_setuid` decides.
    static var isPrivileged: Bool {
        #if canImport(Glibc)
        if getauxval(UInt(AT_SECURE)) != 0 { return true }
        #endif
        return getuid() != geteuid() || getgid() != getegid()
    }
}
