import CourierPluginKit
import Foundation

// The plugin's entry point: Courier calls it after opening libCourierZip.so. Name, version and
// schemes must equal manifest.json.

/// Exports ``ZipEntryHandler`` for the `zip:` scheme.
@_cdecl("courier_plugin_entry")
public func courierPluginEntry() -> UnsafeRawPointer? {
    PluginExport.descriptor(name: "zip", version: "1.0.0",
                            schemes: [.init("zip", [.read, .list, .resume])],
                            handler: ZipEntryHandler.self)
}
