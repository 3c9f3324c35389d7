import Foundation
internal import CourierPluginABI

/// Exports a ``PluginHandler`` subclass through Courier's C plugin ABI.
///
/// A Swift plugin needs only this beside its handler class:
///
/// ```swift
/// @_cdecl("courier_plugin_entry")
/// public func courierPluginEntry() -> UnsafeRawPointer? {
///     PluginExport.descriptor(name: "zip", version: "1.0.0",
///                             schemes: [.init("zip", [.read, .list, .resume])],
///                             handler: ZipHandler.self)
/// }
/// ```
///
/// The name, version and schemes must equal the plugin's manifest, or the host refuses it.
public enum PluginExport {
    /// What a plugin can do with a scheme (the `capabilities` of its manifest).
    public struct Capabilities: OptionSet, Sendable {
        /// The bits of `courier_plugin.h`.
        public let rawValue: UInt32
        /// Capabilities from their bits.
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Fetching a resource.
        public static let read = Capabilities(rawValue: UInt32(COURIER_CAPABILITY_READ))
        /// Storing a request body.
        public static let write = Capabilities(rawValue: UInt32(COURIER_CAPABILITY_WRITE))
        /// Answering a directory-like URL with a listing.
        public static let list = Capabilities(rawValue: UInt32(COURIER_CAPABILITY_LIST))
        /// Continuing a download at a byte offset.
        public static let resume = Capabilities(rawValue: UInt32(COURIER_CAPABILITY_RESUME))
    }

    /// One scheme the plugin serves.
    public struct Scheme: Sendable {
        /// The lowercase scheme.
        public var name: String
        /// What the plugin can do with it.
        public var capabilities: Capabilities
        /// A scheme and its capabilities.
        public init(_ name: String, _ capabilities: Capabilities) {
            self.name = name
            self.capabilities = capabilities
        }
    }

    /// The exported descriptor, built once: the host may call the entry function more than once.
    private static let exported = KitLocked<UncheckedPointer?>(nil)

    /// The handler class the C functions create instances of. One plugin library exports one.
    static let handlerType = KitLocked<HandlerType?>(nil)

    /// The descriptor for the entry function to return: built on the first call, the same pointer
    /// afterwards. Its memory lives as long as the library.
    public static func descriptor(name: String, version: String, schemes: [Scheme],
                                  handler: PluginHandler.Type) -> UnsafeRawPointer? {
        handlerType.withLock { $0 = HandlerType(type: handler) }
        return exported.withLock { cached in
            if let cached { return UnsafeRawPointer(cached.pointer) }
            guard let built = build(name: name, version: version, schemes: schemes) else { return nil }
            cached = UncheckedPointer(pointer: built)
            return UnsafeRawPointer(built)
        }
    }

    private static func build(name: String, version: String, schemes: [Scheme]) -> UnsafeMutableRawPointer? {
        guard let nameCopy = strdup(name), let versionCopy = strdup(version) else { return nil }
        let list = UnsafeMutablePointer<courier_scheme>.allocate(capacity: max(1, schemes.count))
        for (index, scheme) in schemes.enumerated() {
            (list + index).initialize(to: courier_scheme(name: UnsafePointer(strdup(scheme.name)),
                                                         capabilities: scheme.capabilities.rawValue))
        }
        let table = UnsafeMutablePointer<courier_handler_table>.allocate(capacity: 1)
        table.initialize(to: courier_handler_table(
            struct_size: UInt32(MemoryLayout<courier_handler_table>.size),
            create: { request, client, context in PluginHandleBox.create(request, client, context) },
            start: { handle in PluginHandleBox.handler(handle)?.startLoading() },
            stop: { handle in PluginHandleBox.handler(handle)?.stopLoading() },
            destroy: { handle in PluginHandleBox.release(handle) },
            resume_producing: { handle in PluginHandleBox.handler(handle)?.resumeProducing() }
        ))
        let descriptor = UnsafeMutablePointer<courier_plugin_descriptor>.allocate(capacity: 1)
        descriptor.initialize(to: courier_plugin_descriptor(
            abi_version: UInt32(COURIER_PLUGIN_ABI_VERSION),
            struct_size: UInt32(MemoryLayout<courier_plugin_descriptor>.size),
            name: UnsafePointer(nameCopy),
            version: UnsafePointer(versionCopy),
            schemes: UnsafePointer(list),
            scheme_count: schemes.count,
            handlers: UnsafePointer(table)
        ))
        return UnsafeMutableRawPointer(descriptor)
    }

    struct UncheckedPointer: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
    }

    struct HandlerType: @unchecked Sendable {
        let type: PluginHandler.Type
    }
}

/// The object behind each handle the kit gives the host: the handler instance, retained until
/// `destroy`.
final class PluginHandleBox {
    let handler: PluginHandler

    init(_ handler: PluginHandler) { self.handler = handler }

    static func create(_ request: UnsafePointer<courier_request>?, _ client: UnsafePointer<courier_client>?,
                       _ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
        guard let request, let client, let type = PluginExport.handlerType.withLock({ $0?.type }),
              let swiftRequest = PluginRequest(request), type.canInit(with: swiftRequest) else { return nil }
        let handler = type.init(request: swiftRequest, client: PluginClient(table: client, context: context))
        return Unmanaged.passRetained(PluginHandleBox(handler)).toOpaque()
    }

    static func handler(_ handle: UnsafeMutableRawPointer?) -> PluginHandler? {
        guard let handle else { return nil }
        return Unmanaged<PluginHandleBox>.fromOpaque(handle).takeUnretainedValue().handler
    }

    static func release(_ handle: UnsafeMutableRawPointer?) {
        guard let handle else { return }
        Unmanaged<PluginHandleBox>.fromOpaque(handle).release()
    }
}
