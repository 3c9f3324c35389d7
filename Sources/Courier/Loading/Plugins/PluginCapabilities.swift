import Foundation

/// What a plugin can do with one of its URL schemes, as its manifest and its descriptor declare.
///
/// Courier checks a request against them before handing it to the plugin: a `GET` or `HEAD`
/// request needs ``read``, any other method ``write``; resume offsets are passed only to schemes
/// with ``resume``. ``list`` says the scheme answers directory-like URLs with a listing.
public struct PluginCapabilities: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The capability bits, as in `courier_plugin.h` (`COURIER_CAPABILITY_…`).
    public let rawValue: UInt32

    /// Capabilities from their bits in `courier_plugin.h`.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Fetching a resource.
    public static let read = PluginCapabilities(rawValue: 1 << 0)
    /// Storing a request body (methods other than `GET` and `HEAD`).
    public static let write = PluginCapabilities(rawValue: 1 << 1)
    /// Answering a directory-like URL with a listing.
    public static let list = PluginCapabilities(rawValue: 1 << 2)
    /// Continuing a download at a byte offset.
    public static let resume = PluginCapabilities(rawValue: 1 << 3)

    /// Every capability this version of Courier knows.
    static let known: PluginCapabilities = [.read, .write, .list, .resume]

    /// The manifest's name of each capability, in a fixed order.
    static let names: [(name: String, capability: PluginCapabilities)] = [
        ("read", .read), ("write", .write), ("list", .list), ("resume", .resume),
    ]

    /// Capabilities from manifest names; nil when a name is unknown.
    init?(names list: [String]) {
        var result: PluginCapabilities = []
        for name in list {
            guard let match = Self.names.first(where: { $0.name == name }) else { return nil }
            result.insert(match.capability)
        }
        self = result
    }

    /// The capabilities' manifest names, comma-separated (`"read, list"`).
    public var description: String {
        let named = Self.names.filter { contains($0.capability) }.map(\.name)
        return named.isEmpty ? "none" : named.joined(separator: ", ")
    }
}
