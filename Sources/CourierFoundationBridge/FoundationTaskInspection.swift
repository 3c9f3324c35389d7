import Foundation
import FoundationNetworking

/// What the bridge needs to know about a FoundationNetworking task that FoundationNetworking's
/// public interface does not tell a `URLProtocol`: the task's session (to reach its delegate), and
/// whether the body goes to a delegate or to a completion handler.
///
/// The second matters because FoundationNetworking's protocol client keeps only the *last* chunk a
/// custom protocol reports for a completion-handler task (swift-corelibs-foundation stores each
/// `didLoad` in one property, replacing the one before), while a delegate task gets every chunk as
/// it comes. So the bridge streams to delegate tasks and reports the body once, whole, to the rest.
///
/// Both are read with `Mirror` from FoundationNetworking's stored properties (`session`,
/// `taskRegistry`, `behaviours`; swift-corelibs-foundation 5.x and 6.x). Reflection cannot crash: if
/// a later FoundationNetworking renames them, the session is `nil` (no delegate forwarding) and the
/// body is reported whole — correct for every task, only not streamed. It is read in
/// `startLoading()`, which runs on the task's work queue, a queue targeting the session's, where
/// FoundationNetworking itself reads and writes the registry — so the read is not a data race.
struct FoundationTaskInspection {
    /// Whether FoundationNetworking hands the body to a delegate (`didReceive data`) rather than to
    /// a completion handler (or the async API, which uses one).
    let bodyGoesToDelegate: Bool
    /// The delegate that hears the task's redirects and challenges: the task's own, else the
    /// session's; nil without one or when the session is unknown.
    let delegateRoute: FoundationDelegateRoute?

    init(task: FoundationNetworking.URLSessionTask) {
        let session = Self.storedProperty("session", of: task) as? FoundationNetworking.URLSession
        bodyGoesToDelegate = session.map { Self.behaviour(of: task, in: $0) == "callDelegate" } ?? false
        if let session, let delegate = task.delegate ?? (session.delegate as? any FoundationNetworking.URLSessionTaskDelegate) {
            delegateRoute = FoundationDelegateRoute(session: session, task: task, delegate: delegate)
        } else {
            delegateRoute = nil
        }
    }

    /// The name of the task's behaviour in its session's task registry (`callDelegate`,
    /// `dataCompletionHandler`, …), or nil when it cannot be read.
    private static func behaviour(of task: FoundationNetworking.URLSessionTask, in session: FoundationNetworking.URLSession) -> String? {
        guard let registry = storedProperty("taskRegistry", of: session),
              let behaviours = storedProperty("behaviours", of: registry) as? [Int: Any],
              let behaviour = behaviours[task.taskIdentifier] else { return nil }
        // A case with a payload (a completion handler) shows as a child named after the case.
        return Mirror(reflecting: behaviour).children.first?.label ?? String(describing: behaviour)
    }

    /// The value of the stored property `name` of `subject`, looked for in its class and superclasses.
    private static func storedProperty(_ name: String, of subject: Any) -> Any? {
        var mirror: Mirror? = Mirror(reflecting: subject)
        while let current = mirror {
            if let child = current.children.first(where: { $0.label == name }) { return child.value }
            mirror = current.superclassMirror
        }
        return nil
    }
}
