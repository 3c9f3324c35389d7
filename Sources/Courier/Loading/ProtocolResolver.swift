import Foundation

/// Picks the handler class for a request, in Courier's order of precedence:
/// 1. the session configuration's `protocolClasses`, in order;
/// 2. classes registered with `URLProtocol.registerClass(_:)`, most recent first;
/// 3. plugins loaded at run time (``PluginLoader``), found by scheme;
/// 4. the built-in handlers, found by scheme in a ``SchemeTable``.
///
/// Steps 1 and 2 ask each class's `canInit(with:)`, as Apple does; steps 3 and 4 are table lookups.
struct ProtocolResolver: Sendable {
    /// The configuration's classes, captured when the session was created.
    let configured: [ProtocolClassBox]
    /// The built-in handlers.
    let builtIns: SchemeTable
    /// The plugins loaded at run time.
    var plugins: PluginLoader = .shared

    /// The first class that accepts `request`, or nil when none does.
    func handlerClass(for request: URLRequest) -> URLProtocol.Type? {
        for box in configured where box.type.canInit(with: request) { return box.type }
        for type in ProtocolRegistry.shared.registered where type.canInit(with: request) { return type }
        guard let scheme = request.url?.scheme else { return nil }
        if plugins.serves(scheme: scheme) { return PluginURLProtocol.self }
        guard let type = builtIns.handler(forScheme: scheme),
              type.canInit(with: request) else { return nil }
        return type
    }

    /// Whether a download of `url` can be resumed: a plugin serving its scheme declared `resume`, or
    /// (when no plugin serves it) the built-in handler for it is a ``DownloadResumingHandler``.
    func resumesDownloads(of url: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased() else { return false }
        if let library = plugins.library(forScheme: scheme) {
            return library.capabilities(forScheme: scheme).contains(.resume)
        }
        guard let type = builtIns.handler(forScheme: scheme) else { return false }
        return type is any DownloadResumingHandler.Type
    }
}
