import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Refuses a plugin written in Swift when the host carries its own, statically linked Swift
/// runtime (a `courier` built by `scripts/release` with `--static-swift-stdlib`).
///
/// A Swift plugin links the shared runtime (`libswiftCore.so` and Foundation's libraries). Loaded
/// into a host whose runtime is linked in statically, the process would hold two Swift runtimes
/// with two type metadata registries, two sets of globals and two copies of Foundation: types
/// crossing between them are not the same types, and both runtimes install process-wide hooks.
/// That is not supported by Swift, so Courier refuses such a plugin with a clear error before its
/// code runs. C plugins (against `courier_plugin.h` alone) are unaffected, and so is any host that
/// links the shared runtime (every debug build, and any app built without `--static-swift-stdlib`).
enum PluginSwiftRuntimeCheck {
    /// The shared library of the Swift runtime that a Swift plugin names in its `DT_NEEDED` entries.
    static let sharedRuntimeLibrary = "libswiftCore.so"

    /// Whether this process uses the shared Swift runtime (it is already loaded, so asking does
    /// not load it).
    static var hostUsesSharedRuntime: Bool {
        guard let handle = dlopen(sharedRuntimeLibrary, RTLD_LAZY | RTLD_NOLOAD) else { return false }
        dlclose(handle)
        return true
    }

    /// Why the library at `url` cannot be loaded into this host, or nil when it can.
    ///
    /// - Parameter hostUsesSharedRuntime: whether the host links the shared Swift runtime (tests
    ///   pass `false` to check the refusal from a debug build).
    static func problem(with url: URL, hostUsesSharedRuntime: Bool = hostUsesSharedRuntime) -> String? {
        if hostUsesSharedRuntime { return nil }
        guard let needed = try? ELFNeededLibraries.read(url), needed.contains(sharedRuntimeLibrary) else { return nil }
        return "the plugin is written in Swift and needs the shared Swift runtime (\(sharedRuntimeLibrary)), "
            + "but this program carries its own statically linked Swift runtime, and two Swift runtimes "
            + "cannot share one process; use a C plugin, or a build of the program without --static-swift-stdlib"
    }
}
