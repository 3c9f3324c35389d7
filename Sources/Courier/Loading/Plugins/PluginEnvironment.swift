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

    /// Whether this process runs with privileges its user does not have (setuid, setgid or file
    /// capabilities), as glib's `g_check_setuid` decides: the kernel's `AT_SECURE` flag, or real and
    /// effective ids that differ.
    static var isPrivileged: Bool {
        if getuid() != geteuid() || getgid() != getegid() { return true }
        return secureExecutionFlag ?? false
    }

    /// `AT_SECURE` from `/proc/self/auxv` (pairs of native words), or nil when unreadable.
    private static var secureExecutionFlag: Bool? {
        guard let data = FileManager.default.contents(atPath: "/proc/self/auxv") else { return nil }
        let atSecure: UInt = 23
        let word = MemoryLayout<UInt>.size
        var offset = 0
        while offset + 2 * word <= data.count {
            let (type, value) = data.withUnsafeBytes { bytes in
                (bytes.loadUnaligned(fromByteOffset: offset, as: UInt.self),
                 bytes.loadUnaligned(fromByteOffset: offset + word, as: UInt.self))
            }
            if type == 0 { break }
            if type == atSecure { return value != 0 }
            offset += 2 * word
        }
        return nil
    }
}
