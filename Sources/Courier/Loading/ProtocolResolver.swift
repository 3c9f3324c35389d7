import Foundation

/// Picks the handler for a request, in Courier's order of precedence:
/// 1. the session configuration's `protocolClasses`, in order;
/// 2. classes registered with `URLProtocol.registerClass(_:)`, most recent first;
/// 3. plugins loaded at run time (``PluginLoader``), found by scheme;
/// 4. the built-in handlers, found by scheme in the ``SchemeTable``.
///
/// Steps 1 and 2 ask each class's `canInit(with:)`, as Apple does; steps 3 and 4 are table lookups.
/// The answer is a ``ResolvedHandler``: the class and its capabilities, from the table's row, the
/// plugin's manifest, or none for an app's class.
struct ProtocolResolver: Sendable {
    /// The configuration's classes, captured when the session was created.
    let configured: [ProtocolClassBox]
    /// The built-in handlers.
    let builtIns: SchemeTable
    /// The plugins loaded at run time.
    var plugins: PluginLoader = .shared

    /// The first handler that accepts `request`, or nil when none does.
    func resolve(_ request: URLRequest) -> ResolvedHandler? {
        for box in configured where box.type.canInit(with: request) { return supplied(box.type, for: request) }
        for type in ProtocolRegistry.shared.registered where type.canInit(with: request) { return supplied(type, for: request) }
        guard let scheme = request.url?.scheme else { return nil }
        if let library = plugins.library(forScheme: scheme) { return ResolvedHandler(plugin: library, scheme: scheme) }
        guard let row = builtIns.row(forScheme: scheme), row.handler.canInit(with: request) else { return nil }
        return ResolvedHandler(row: row)
    }

    /// The class of the first handler that accepts `request`, or nil when none does.
    func handlerClass(for request: URLRequest) -> URLProtocol.Type? {
        resolve(request)?.type
    }

    /// A class from the configuration or the registry: an app's class has no capabilities; one of
    /// the built-in classes (only Courier's own code can name them) keeps its row's.
    private func supplied(_ type: URLProtocol.Type, for request: URLRequest) -> ResolvedHandler {
        if let row = builtIns.row(handledBy: type, scheme: request.url?.scheme) { return ResolvedHandler(row: row) }
        return ResolvedHandler(appClass: type)
    }

    /// Whether a download of `url` can be resumed: the plugin serving its scheme declared `resume`,
    /// or (when no plugin serves it) the scheme's row has ``HandlerCapabilities/resume``.
    func resumesDownloads(of url: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased() else { return false }
        if let library = plugins.library(forScheme: scheme) {
            return library.capabilities(forScheme: scheme).contains(.resume)
        }
        return builtIns.row(forScheme: scheme)?.capabilities.contains(.resume) ?? false
    }

    /// Why the delegate's `answer` to a redirect to `proposed` must not be loaded, or `nil`
    /// (``SchemeTable/refusal(ofAnswer:toProposed:)``).
    func refusal(ofAnswer answer: URLRequest, toProposed proposed: URLRequest) -> URLError? {
        builtIns.refusal(ofAnswer: answer, toProposed: proposed)
    }

    /// Whether requests of `scheme` are looked up in the session's cache
    /// (``HandlerCapabilities/cachesResponses`` in its row).
    func cachesResponses(forScheme scheme: String) -> Bool {
        builtIns.row(forScheme: scheme)?.capabilities.contains(.cachesResponses) ?? false
    }
}
