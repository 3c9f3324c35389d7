import Foundation
import Logging

/// Everything a handler instance needs to know about the load it serves, fixed when it is made: the
/// session's stores, settings and resources (``environment``), the request's effective cache policy
/// and timeouts, and when the cached response it was handed was stored.
///
/// The task builds one for each handler instance from what its session handed it at creation
/// (`TaskSessionContext.handlerConfiguration(for:cachedResponse:)`) and its client carries it (``BuiltInHandlerClient/configuration``), so Apple's
/// `init(task:cachedResponse:client:)` stays the only initializer and no handler or client reaches
/// back through the task to the session. A handler driven without a task (no
/// ``BuiltInHandlerClient``) uses ``standalone()``.
struct HandlerConfiguration: Sendable {
    /// The session's stores, connection settings and per-session resources.
    let environment: HandlerEnvironment
    /// The request's cache policy, with the configuration's in place of `useProtocolCachePolicy`.
    let cachePolicy: URLRequest.CachePolicy
    /// The idle timeout of this request: its own `timeoutInterval` when that is not the default
    /// 60 s, else the configuration's `timeoutIntervalForRequest` (0: none).
    let requestTimeout: TimeInterval
    /// The configuration's `timeoutIntervalForResource` (0: none).
    let resourceTimeout: TimeInterval
    /// When the cached response the handler was given was stored in the session's cache (the start
    /// of its age), or `nil` when there is none or the cache does not know. Handlers never read or
    /// write the cache themselves: the task looks up and stores.
    let cachedResponseStoredAt: Date?
    /// The logger of this load: the session's, with the task's identifier in its metadata when it
    /// logs at `debug` or below.
    var logger = CourierLogging.disabled

    /// A configuration with no stores, for handlers driven outside a session.
    static func standalone() -> HandlerConfiguration {
        HandlerConfiguration(environment: .standalone(), cachePolicy: .useProtocolCachePolicy,
                             requestTimeout: 60, resourceTimeout: 0, cachedResponseStoredAt: nil)
    }
}
