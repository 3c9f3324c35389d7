import Foundation

/// A handler Courier ships, declaring the URL schemes it serves so the loader finds it by a table
/// lookup instead of asking every handler.
protocol SchemeHandler: URLProtocol {
    /// The URL schemes this handler serves (each a ``BuiltInScheme``, so none escapes the list
    /// plugins are kept from).
    static var schemes: [BuiltInScheme] { get }
}

/// A lookup table from lowercase URL scheme to the handler class serving it.
struct SchemeTable: Sendable {
    private var handlers: [String: ProtocolClassBox] = [:]

    /// A table holding each handler under each of its schemes; later entries win.
    init(_ handlerTypes: [any SchemeHandler.Type]) {
        for type in handlerTypes {
            for scheme in type.schemes { handlers[scheme.rawValue] = ProtocolClassBox(type) }
        }
    }

    /// The handler for `scheme`, compared without case.
    func handler(forScheme scheme: String) -> URLProtocol.Type? {
        if let exact = handlers[scheme] { return exact.type }
        return handlers[scheme.lowercased()]?.type
    }

    /// Every scheme in the table, sorted.
    var schemes: [String] { handlers.keys.sorted() }
}
