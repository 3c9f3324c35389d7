import Foundation

/// Courier's plugin loader: URL scheme handlers loaded from shared libraries at run time.
///
/// A plugin is a shared library with a JSON manifest beside it (see `Documentation/Plugins.md`).
/// Once loaded, its schemes work through every API — tasks, delegates, async — like built-in ones.
/// Precedence: the session configuration's `protocolClasses`, then classes registered with
/// `URLProtocol.registerClass(_:)`, then plugins, then Courier's built-in handlers.
///
/// The first use of the loader (any request, or any call here) also loads the directories listed
/// in the `COURIER_PLUGIN_PATH` environment variable (colon-separated), unless the process is
/// setuid or setgid.
///
/// This is Courier's own API; Apple's URL Loading System has no plugins.
public enum CourierPlugins {
    /// The environment variable naming plugin directories to load on first use.
    public static let environmentVariable = PluginEnvironment.variable

    /// The directories `COURIER_PLUGIN_PATH` names, which the loader loads on first use (none in a
    /// setuid or setgid process).
    public static var environmentDirectories: [URL] {
        PluginEnvironment.directories(ProcessInfo.processInfo.environment)
    }

    /// The plugin ABI versions (`COURIER_PLUGIN_ABI_VERSION`) this build of Courier loads.
    public static var supportedABIVersions: ClosedRange<Int> { PluginABI.supportedVersions }

    /// The schemes Courier serves itself (`data`, `file`, `ftp`, `ftps`, `http`, `https`, `sftp`):
    /// plugins may serve them only with ``PluginLoadOptions/allowBuiltInSchemes``.
    public static var builtInSchemes: Set<String> { BuiltInScheme.names }

    /// Loads every plugin whose manifest (`*.json`) is in `directory`.
    ///
    /// Each manifest is read and checked — its JSON, its ABI version, its schemes, the library file
    /// beside it, and the permissions of both files and of the directory, which must belong to the
    /// current user or root and be writable by no one else. Libraries are opened when one of their
    /// schemes is first used, unless `options` has ``PluginLoadOptions/openLibrariesNow``. A bad
    /// plugin is refused and reported; it never stops the others. Loading the same file again is
    /// harmless: it is reported as loaded and nothing changes.
    ///
    /// - Parameters:
    ///   - directory: A directory of manifests and libraries (not searched recursively).
    ///   - options: Whether to open libraries now, and whether plugins may serve built-in schemes.
    /// - Returns: The plugins accepted and, per refused file, why.
    @discardableResult
    public static func load(directory: URL, options: PluginLoadOptions = []) -> PluginLoadReport {
        PluginLoader.shared.load(directory: directory, options: options)
    }

    /// Every plugin loaded so far and still serving its schemes.
    public static var loaded: [LoadedPlugin] { PluginLoader.shared.loaded }

    /// Every plugin file refused so far, including those in `COURIER_PLUGIN_PATH` and libraries
    /// that failed when first opened.
    public static var failures: [PluginLoadError] { PluginLoader.shared.failures }
}
