import Foundation

// Which delegate receives which message: the task's own delegate when it adopts the protocol the
// message belongs to and implements the message, otherwise the session's delegate (see
// `DelegateFallthrough.swift`). Each message is sent once, on the delegate queue, where it always was.
extension URLSessionTask {
    /// Sends a message of the protocol `D` (`any URLSessionTaskDelegate`, `…DataDelegate`,
    /// `…DownloadDelegate`): to the task's own delegate when it adopts `D` and implements the
    /// message, otherwise to the session's delegate when that adopts `D`. `false` when neither
    /// adopts `D`; the caller then applies the default behaviour.
    @discardableResult
    func sendToDelegate<D>(_ message: DelegateMessage, as _: D.Type, _ send: (D) -> Void) -> Bool {
        let shared = context?.owner.delegate as? D
        if sendToOwnDelegate(message, as: D.self, fallsThrough: shared != nil, send) { return true }
        guard let shared else { return false }
        send(shared)
        return true
    }

    /// Sends a message of `D` to the task's own delegate when it adopts `D`; `true` when it handled
    /// the message. With `fallsThrough` (the session's delegate can take the message), a message the
    /// delegate does not implement is not handled: its default does nothing and `false` comes back.
    /// Without, the delegate's default handles it as documented.
    func sendToOwnDelegate<D>(_ message: DelegateMessage, as _: D.Type, fallsThrough: Bool, _ send: (D) -> Void) -> Bool {
        guard let own = lock.withLock({ core.delegate }), let adopted = own as? D else { return false }
        guard fallsThrough else {
            send(adopted)
            return true
        }
        return DelegateFallthrough.handled(message, by: own) { send(adopted) }
    }

    /// Whether any delegate can receive task-level messages (metrics are built only then).
    var hasTaskDelegate: Bool {
        lock.withLock({ core.delegate }) != nil || context?.owner.delegate is URLSessionTaskDelegate
    }
}
