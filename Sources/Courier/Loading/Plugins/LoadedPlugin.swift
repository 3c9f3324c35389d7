import Foundation

/// A plugin Courier has accepted: its name, version, schemes and files.
///
/// Accepting a plugin reads its manifest only; the library itself is opened the first time one of
/// its schemes is used (or at once with ``PluginLoadOptions/openLibrariesNow``).
public struct LoadedPlugin: Sendable, Hashable, CustomStringConvertible {
    /// One URL scheme a plugin serves.
    public struct Scheme: Sendable, Hashable {
        /// The scheme, in lowercase (`"gopher"`).
        public let name: String
        /// What the plugin can do with it.
        public let capabilities: PluginCapabilities

        /// A scheme and its capabilities.
        public init(name: String, capabilities: PluginCapabilities) {
            self.name = name
            self.capabilities = capabilities
        }
    }

    /// The plugin's name, from its manifest.
    public let name: String
    /// The plugin's version, from its manifest.
    public let version: String
    /// The schemes the plugin serves.
    public let schemes: [Scheme]
    /// The plugin's shared library.
    public let libraryURL: URL
    /// The manifest the plugin was loaded from.
    public let manifestURL: URL

    /// One line for people: name, version, schemes and library.
    public var description: String {
        let list = schemes.map { "\($0.name) (\($0.capabilities))" }.joined(separator: ", ")
        return "\(name) \(version): \(list) — \(libraryURL.path)"
    }
}
