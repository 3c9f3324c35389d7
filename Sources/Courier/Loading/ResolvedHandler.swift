import Foundation

/// The handler the loader chose for a request, with what it can do: built from a row of the scheme
/// table (a built-in handler), from a plugin's manifest (the plugin bridge), or — for a
/// `URLProtocol` subclass an app put in its configuration or registered — with no capabilities and
/// no redirect confinement.
///
/// The task keeps it with the running load and asks it, never the handler's class, whether to make
/// a queue for the handler, whether to wake it after back-pressure, whether to keep it for a refused
/// redirect and where its redirects may lead.
struct ResolvedHandler: @unchecked Sendable {
    /// The class that serves the request. Class objects are immutable metadata, safe to share.
    let type: URLProtocol.Type
    /// What the handler can do; empty for an app's class.
    let capabilities: HandlerCapabilities
    /// Where the handler's redirects may lead; `nil`: anywhere (an app's class) or it never
    /// redirects.
    let redirectConfinement: RedirectConfinement?
    /// The class as one of Courier's own handlers, whose extra operations the task may call; `nil`
    /// for an app's class.
    private let courierType: BuiltInURLProtocol.Type?

    /// A built-in handler, as its row in the scheme table declares it.
    init(row: SchemeRow) {
        type = row.handler
        courierType = row.handler
        capabilities = row.capabilities
        redirectConfinement = row.redirectConfinement
    }

    /// The plugin bridge serving a scheme of `library`, with the capabilities the manifest declared
    /// for `scheme` and those of the bridge itself (``PluginURLProtocol/bridgeCapabilities``).
    init(plugin library: PluginLibrary, scheme: String) {
        type = PluginURLProtocol.self
        courierType = PluginURLProtocol.self
        capabilities = HandlerCapabilities(plugin: library.capabilities(forScheme: scheme.lowercased()))
            .union(PluginURLProtocol.bridgeCapabilities)
        redirectConfinement = library.redirectConfinement
    }

    /// A class the app supplied: Apple's contract only, no capabilities, redirects anywhere.
    init(appClass: URLProtocol.Type) {
        type = appClass
        courierType = nil
        capabilities = []
        redirectConfinement = nil
    }

    /// A handler instance and, for Courier's own handlers, the same instance as a
    /// ``BuiltInURLProtocol`` (for the operations ``capabilities`` declare).
    struct Instance {
        /// The handler, driven through Apple's `URLProtocol` methods.
        let handler: URLProtocol
        /// The handler's extra operations; `nil` for an app's class.
        let operations: BuiltInURLProtocol?
    }

    /// Creates the handler for `task` with Apple's `init(task:cachedResponse:client:)`.
    func makeInstance(task: URLSessionTask, cachedResponse: CachedURLResponse?, client: any URLProtocolClient) -> Instance {
        if let courierType {
            let instance = courierType.init(task: task, cachedResponse: cachedResponse, client: client)
            return Instance(handler: instance, operations: instance)
        }
        return Instance(handler: type.init(task: task, cachedResponse: cachedResponse, client: client), operations: nil)
    }

    /// The cache scope of `request` (``HandlerCapabilities/cacheScoping``), or `nil` when the handler
    /// names none.
    func cacheScope(for request: URLRequest, environment: HandlerEnvironment) -> String? {
        guard capabilities.contains(.cacheScoping), let courierType else { return nil }
        return courierType.cacheScope(for: request, environment: environment)
    }
}
