import Foundation

/// What loading a plugin directory did: the plugins accepted and the files refused.
public struct PluginLoadReport: Sendable {
    /// The plugins accepted, in file-name order. A plugin that was already loaded from the same
    /// file is listed again.
    public let loaded: [LoadedPlugin]
    /// One error per refused file, in file-name order.
    public let failures: [PluginLoadError]

    /// A report of `loaded` plugins and `failures`.
    public init(loaded: [LoadedPlugin], failures: [PluginLoadError]) {
        self.loaded = loaded
        self.failures = failures
    }
}

/// How ``CourierPlugins/load(directory:options:)`` treats the plugins it finds.
public struct PluginLoadOptions: OptionSet, Sendable, Hashable {
    /// The option bits.
    public let rawValue: Int

    /// Options from their bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Open every library while loading, so that a missing entry symbol, an unsupported ABI
    /// version or a descriptor that disagrees with its manifest is reported now rather than when
    /// the scheme is first used. By default libraries are opened lazily.
    public static let openLibrariesNow = PluginLoadOptions(rawValue: 1 << 0)

    /// Let plugins serve Courier's built-in schemes (``CourierPlugins/builtInSchemes``: `data`,
    /// `file`, `ftp`, `ftps`, `http`, `https`, `sftp`). Without it such a plugin is refused with
    /// ``PluginLoadError/Reason/builtInScheme(_:)``.
    public static let allowBuiltInSchemes = PluginLoadOptions(rawValue: 1 << 1)
}
