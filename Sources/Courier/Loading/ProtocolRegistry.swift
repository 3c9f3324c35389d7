import Foundation

/// The classes registered with `URLProtocol.registerClass(_:)`, most recent first.
final class ProtocolRegistry: Sendable {
    /// The process-wide registry behind `URLProtocol.registerClass(_:)`.
    static let shared = ProtocolRegistry()

    private let classes = Locked<[ProtocolClassBox]>([])

    /// Adds `type` at the front; registering a class again moves it to the front.
    func register(_ type: URLProtocol.Type) {
        classes.withLock { list in
            list.removeAll { $0.type == type }
            list.insert(ProtocolClassBox(type), at: 0)
        }
    }

    /// Removes `type`; unknown classes are ignored.
    func unregister(_ type: URLProtocol.Type) {
        classes.withLock { $0.removeAll { $0.type == type } }
    }

    /// The registered classes, most recently registered first.
    var registered: [URLProtocol.Type] {
        classes.withLock { $0.map(\.type) }
    }
}

/// A `URLProtocol` subclass stored where a `Sendable` value is needed. Class objects are immutable
/// metadata, safe to share between threads.
struct ProtocolClassBox: @unchecked Sendable {
    let type: URLProtocol.Type
    init(_ type: URLProtocol.Type) { self.type = type }
}
