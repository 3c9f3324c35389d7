import Foundation
internal import CourierPluginABI

/// Facts about the C contract in `courier_plugin.h` that the host side needs.
enum PluginABI {
    /// The descriptor ABI versions this host can load.
    static let supportedVersions: ClosedRange<Int> = 1...Int(COURIER_PLUGIN_ABI_VERSION)

    /// The name of the function every plugin exports.
    static let entrySymbol = COURIER_PLUGIN_ENTRY_SYMBOL

    /// Strings read from a plugin are cut at this many bytes, so a missing terminator cannot make
    /// the host read without end.
    static let maximumStringLength = 64 * 1024

    /// The most header fields accepted in one response.
    static let maximumHeaderCount = 1024

    /// A NUL-terminated UTF-8 string from the plugin, or nil for NULL. Reads at most
    /// ``maximumStringLength`` bytes; invalid UTF-8 is repaired.
    static func string(_ pointer: UnsafePointer<CChar>?) -> String? {
        guard let pointer else { return nil }
        let length = strnlen(pointer, maximumStringLength)
        return pointer.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
            String(decoding: UnsafeBufferPointer(start: bytes, count: length), as: UTF8.self)
        }
    }
}
