import Foundation

/// Everything a task needs from the session that made it, handed over when the task is created:
/// the configuration's settings, how requests find their handler, the cache, what handlers are
/// made with, where delegate calls run, and whom to tell about the task's life.
///
/// A task never reaches up into `URLSession` for these: it prepares requests, computes timeouts and
/// builds each handler's ``HandlerConfiguration`` from this value. One context serves all the tasks
/// of a session (made with its first task), so a task pays one reference for it. The session is
/// here only as ``owner``, the ``TaskOwner`` the task notifies; the task also keeps its session
/// strongly, as the argument Apple's delegate methods take (`URLSessionTask.session`), and that
/// reference keeps the owner alive while any of its tasks lives.
final class TaskSessionContext: Sendable {
    /// The task's owner: the session's current delegate, and the notifications of the task's life.
    /// Unowned, because the session holds its context (a strong reference would keep the session
    /// alive forever); every task holding the context also holds the session.
    unowned let owner: any TaskOwner
    /// The session's delegate queue: every delegate call and completion handler runs there.
    let delegateQueue: OperationQueue
    /// Puts the task's drains on ``delegateQueue`` (batched with other tasks' on a serial queue).
    let drains: TaskDrainScheduler
    /// The configuration's settings a task reads (headers, cache policy, timeouts).
    let settings: SessionSettings
    /// How requests find their handler, and what each scheme's handler can do.
    let resolver: ProtocolResolver
    /// The configuration's `urlCache`: the task layer alone looks responses up and stores them.
    let cache: URLCache?
    /// What built-in handlers are made with: the session's stores, settings and resources.
    let environment: HandlerEnvironment

    init(owner: any TaskOwner, delegateQueue: OperationQueue, drains: TaskDrainScheduler, settings: SessionSettings,
         resolver: ProtocolResolver, cache: URLCache?, environment: HandlerEnvironment) {
        self.owner = owner
        self.delegateQueue = delegateQueue
        self.drains = drains
        self.settings = settings
        self.resolver = resolver
        self.cache = cache
        self.environment = environment
    }

    /// The configuration a handler instance for `request` is made with, `cachedResponse` being the
    /// response the task looked up for it (its storage date starts the response's age).
    /// `task`: the task's identifier, for the load's log metadata.
    func handlerConfiguration(for request: URLRequest, cachedResponse: CachedURLResponse?, task: Int? = nil) -> HandlerConfiguration {
        settings.handlerConfiguration(for: request, environment: environment,
                                      cachedResponseStoredAt: cachedResponse.flatMap { cache?.storageDate(of: $0, for: request) },
                                      task: task)
    }
}
